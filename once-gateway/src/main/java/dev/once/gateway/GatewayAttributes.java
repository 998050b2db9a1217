package dev.once.gateway;

/** The request attributes the proxy and the idempotency filter talk through. */
final class GatewayAttributes {

  /** The {@link dev.once.http.Exchange} of a request the filter is guarding (set by the filter). */
  static final String EXCHANGE = "dev.once.http.Exchange";
  /** Set by the proxy when the upstream may or may not have acted: the filter abandons the exchange. */
  static final String OUTCOME = "dev.once.outcome";
  static final String AMBIGUOUS = "ambiguous";

  private GatewayAttributes() {}
}

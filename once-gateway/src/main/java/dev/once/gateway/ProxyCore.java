package dev.once.gateway;

import java.util.Locale;

/**
 * What carries the proxy port's bytes, client side and upstream side: the proxy's rules ({@link
 * ProxyHandler}) are the same on either, written against {@link ClientHop} and {@link
 * UpstreamResponse}. The management port is Jetty's servlets whatever this says.
 */
enum ProxyCore {
  /** Jetty's server and its asynchronous client ({@link JettyProxy}, {@link JettyUpstream}). */
  JETTY,

  /**
   * Netty's, the default: each request's upstream connection on its client connection's event loop
   * ({@link NettyProxy}, {@link NettyUpstream}). Chosen by measurement: docs/benchmarks.md, "The
   * two cores side by side".
   */
  NETTY;

  static ProxyCore parse(String value) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "jetty" -> JETTY;
      case "netty" -> NETTY;
      default ->
          throw new IllegalArgumentException("core must be jetty or netty, was '" + value + "'");
    };
  }
}

package dev.once.http;

import dev.once.protocol.WireProtocol;

/**
 * Every problem the idempotency layer answers with, as RFC 9457 {@code application/problem+json}.
 * The {@link #uri()} is stable: clients may switch on it. Documented in {@code docs/http.md}; the
 * slugs are once-protocol's {@link WireProtocol} constants, which the client reads too.
 */
public enum ProblemType {
  /** The route requires an {@code Idempotency-Key} and the request has none. */
  KEY_MISSING(WireProtocol.KEY_MISSING, 400, "Idempotency-Key header is missing"),
  /** The key is empty, too long, has characters outside 0x21-0x7E, or is a malformed sf-string. */
  KEY_INVALID(WireProtocol.KEY_INVALID, 400, "Idempotency-Key header is invalid"),
  /** The key was used before with a different request. */
  KEY_REUSED(WireProtocol.KEY_REUSED, 422, "Idempotency-Key was used with a different request"),
  /** The first request with this key is still being processed. */
  IN_FLIGHT(WireProtocol.IN_FLIGHT, 409, "A request with this Idempotency-Key is in progress"),
  /** The request was processed but its response could not be stored. */
  RESPONSE_UNAVAILABLE(
      WireProtocol.RESPONSE_UNAVAILABLE,
      409,
      "The request was processed, but its response is not available for replay"),
  /** The idempotency store cannot be reached; nothing was executed. */
  STORE_UNAVAILABLE(WireProtocol.STORE_UNAVAILABLE, 503, "Idempotency store is unavailable"),
  /** The request body is larger than the route allows. */
  BODY_TOO_LARGE(WireProtocol.BODY_TOO_LARGE, 413, "Request body is too large"),
  /** The client created new keys faster than its {@link NewKeyLimit} allows; nothing was stored. */
  RATE_LIMITED(WireProtocol.RATE_LIMITED, 429, "Too many new idempotency keys"),
  /** The request names its tenant twice, differently: whose key it is cannot be told. */
  TENANT_AMBIGUOUS(WireProtocol.TENANT_AMBIGUOUS, 400, "The request names more than one tenant"),
  /** The request names no tenant, and the scope resolver requires one. */
  TENANT_MISSING(WireProtocol.TENANT_MISSING, 400, "The request names no tenant");

  /** The base of every problem type URI. */
  public static final String BASE_URI = WireProtocol.PROBLEM_BASE_URI;

  private final String slug;
  private final int status;
  private final String title;

  ProblemType(String slug, int status, String title) {
    this.slug = slug;
    this.status = status;
    this.title = title;
  }

  /** The short, stable name, e.g. {@code idempotency-key-reused}. */
  public String slug() {
    return slug;
  }

  /** The problem's {@code type} member. */
  public String uri() {
    return BASE_URI + slug;
  }

  public int status() {
    return status;
  }

  public String title() {
    return title;
  }
}

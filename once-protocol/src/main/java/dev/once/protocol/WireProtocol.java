package dev.once.protocol;

/**
 * The names a Once server and its clients agree on: header fields, the problem media type and the
 * problem type URIs. They are spelled here once because the server side (once-http, the gateway),
 * the client and the outbox are separate modules that must never disagree on one of them; {@code
 * docs/http.md} documents them.
 */
public final class WireProtocol {

  /**
   * The request header that carries the idempotency key
   * (draft-ietf-httpapi-idempotency-key-header).
   */
  public static final String KEY_HEADER = "Idempotency-Key";

  /** The response header, {@code true} on a replayed response. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  /** How long a client should wait before it retries (RFC 9110 §10.2.3). */
  public static final String RETRY_AFTER_HEADER = "Retry-After";

  /** The media type of every problem body (RFC 9457). */
  public static final String PROBLEM_MEDIA_TYPE = "application/problem+json";

  /** The base of every problem type URI; a problem's {@code type} is this plus its slug. */
  public static final String PROBLEM_BASE_URI = "https://once.dev/problems/";

  /** 400: the route requires an {@code Idempotency-Key} and the request has none. */
  public static final String KEY_MISSING = "idempotency-key-missing";

  /**
   * 400: the key is empty, too long, has characters outside 0x21-0x7E, or is a malformed sf-string.
   */
  public static final String KEY_INVALID = "idempotency-key-invalid";

  /** 422: the key was used before with a different request; a client never retries it. */
  public static final String KEY_REUSED = "idempotency-key-reused";

  /**
   * 409: the first request with this key is still being processed; retry after {@code Retry-After}.
   */
  public static final String IN_FLIGHT = "idempotency-request-in-flight";

  /**
   * 409: the request was processed but its response cannot be replayed; a client never retries it.
   */
  public static final String RESPONSE_UNAVAILABLE = "idempotency-response-unavailable";

  /** 503: the idempotency store cannot be reached; nothing was executed. */
  public static final String STORE_UNAVAILABLE = "idempotency-store-unavailable";

  /** 413: the request body is larger than the route allows. */
  public static final String BODY_TOO_LARGE = "request-body-too-large";

  /** 429: the client created new keys faster than the server allows; nothing was stored. */
  public static final String RATE_LIMITED = "idempotency-rate-limited";

  /** 400: the request names its tenant twice, differently. */
  public static final String TENANT_AMBIGUOUS = "tenant-ambiguous";

  /** 400: the request names no tenant, and the server requires one. */
  public static final String TENANT_MISSING = "tenant-missing";

  private WireProtocol() {}
}

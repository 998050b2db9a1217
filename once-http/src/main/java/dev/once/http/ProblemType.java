package dev.once.http;

/**
 * Every problem the idempotency layer answers with, as RFC 9457 {@code application/problem+json}.
 * The {@link #uri()} is stable: clients may switch on it. Documented in {@code docs/http.md}.
 */
public enum ProblemType {
  /** The route requires an {@code Idempotency-Key} and the request has none. */
  KEY_MISSING("idempotency-key-missing", 400, "Idempotency-Key header is missing"),
  /** The key is empty, too long, has characters outside 0x21-0x7E, or is a malformed sf-string. */
  KEY_INVALID("idempotency-key-invalid", 400, "Idempotency-Key header is invalid"),
  /** The key was used before with a different request. */
  KEY_REUSED("idempotency-key-reused", 422, "Idempotency-Key was used with a different request"),
  /** The first request with this key is still being processed. */
  IN_FLIGHT("idempotency-request-in-flight", 409, "A request with this Idempotency-Key is in progress"),
  /** The request was processed but its response could not be stored. */
  RESPONSE_UNAVAILABLE("idempotency-response-unavailable", 409,
      "The request was processed, but its response is not available for replay"),
  /** The idempotency store cannot be reached; nothing was executed. */
  STORE_UNAVAILABLE("idempotency-store-unavailable", 503, "Idempotency store is unavailable"),
  /** The request body is larger than the route allows. */
  BODY_TOO_LARGE("request-body-too-large", 413, "Request body is too large"),
  /** The client created new keys faster than its {@link NewKeyLimit} allows; nothing was stored. */
  RATE_LIMITED("idempotency-rate-limited", 429, "Too many new idempotency keys"),
  /** The request names its tenant twice, differently: whose key it is cannot be told. */
  TENANT_AMBIGUOUS("tenant-ambiguous", 400, "The request names more than one tenant"),
  /** The request names no tenant, and the scope resolver requires one. */
  TENANT_MISSING("tenant-missing", 400, "The request names no tenant");

  /** The base of every problem type URI. */
  public static final String BASE_URI = "https://once.dev/problems/";

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

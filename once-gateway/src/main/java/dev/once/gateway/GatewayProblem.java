package dev.once.gateway;

import dev.once.http.Headers;
import dev.once.http.ProblemType;
import dev.once.http.Problems;
import dev.once.http.StoredResponse;
import dev.once.protocol.WireProtocol;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;

/**
 * The RFC 9457 problems the gateway itself answers, beside the idempotency ones of {@link
 * ProblemType}. For upstream failures what matters is whether the request may have reached the
 * upstream: only {@link #UPSTREAM_UNREACHABLE} says retrying is safe; the others leave the key in
 * progress until its lease ends, so a retry cannot run an effect twice that may have happened.
 */
enum GatewayProblem {

  /** No connection to the upstream could be opened, so nothing was sent. Retrying is safe. */
  UPSTREAM_UNREACHABLE(
      502,
      "upstream-unreachable",
      "Upstream is unreachable",
      "The upstream could not be reached; nothing was sent to it. Retrying is safe."),
  /** The request was sent and no complete response came back within the upstream timeout. */
  UPSTREAM_TIMEOUT(
      504,
      "upstream-timeout",
      "Upstream timed out",
      "The upstream did not answer in time; the request may have been processed. A retry with the same"
          + " Idempotency-Key is answered 409 until the key's lease ends, then runs again."),
  /** The request may have been sent and the connection failed before a complete response. */
  UPSTREAM_FAILED(
      502,
      "upstream-failed",
      "Upstream connection failed",
      "The connection to the upstream failed after the request may have been sent; the request may have"
          + " been processed. A retry with the same Idempotency-Key is answered 409 until the key's lease"
          + " ends, then runs again."),
  /** The upstream answered with more header bytes than the gateway may deliver. */
  UPSTREAM_HEADERS_TOO_LARGE(
      502,
      "upstream-headers-too-large",
      "Upstream response headers are too large",
      "The upstream processed the request but its response headers are larger than the gateway delivers."
          + " Do not retry with this key; its retries are answered 409 idempotency-response-unavailable."),
  /**
   * The upstream's status line arrived, so it acted, and its response broke off before it was
   * complete: never recorded, never run again.
   */
  UPSTREAM_RESPONSE_INCOMPLETE(
      502,
      "upstream-response-incomplete",
      "Upstream response is incomplete",
      "The upstream processed the request but its response broke off before it was complete. Do not"
          + " retry with this key; its retries are answered 409 idempotency-response-unavailable."),
  /**
   * The upstream answered with a status no intermediary may relay as final: a 1xx, or one outside
   * 100-599. It acted, so the key is done.
   */
  UPSTREAM_PROTOCOL_ERROR(
      502,
      "upstream-protocol-error",
      "Upstream broke the HTTP protocol",
      "The upstream processed the request but answered with a status that is no final HTTP status (a"
          + " 1xx, or one outside 100-599). Do not retry with this key; its retries are answered 409"
          + " idempotency-response-unavailable."),
  /**
   * CONNECT (a tunnel) and TRACE (which would echo the client's cookies and credentials back
   * through the upstream) are not proxied: answered here, never forwarded.
   */
  METHOD_NOT_SUPPORTED(
      501,
      "method-not-supported",
      "Method is not supported by the gateway",
      "The gateway does not forward CONNECT or TRACE requests; nothing was sent upstream."),
  /**
   * A method that is no HTTP token (RFC 9110 §9.1): Jetty's parser takes any visible character
   * there, and an upstream may parse such bytes otherwise. Refused, as nginx refuses them.
   */
  METHOD_MALFORMED(
      400,
      "method-malformed",
      "Method is malformed",
      "The request method is not an HTTP token; nothing was sent upstream."),
  /** The gateway failed (a defect) after it claimed the key; the request may have been sent. */
  GATEWAY_FAILED(
      500,
      "gateway-failed",
      "Gateway failed",
      "The gateway failed while proxying the request; it may have been processed. A retry with the same"
          + " Idempotency-Key is answered 409 until the key's lease ends, then runs again."),
  /** The client did not send its request body within the request body timeout. Nothing was run. */
  REQUEST_BODY_TIMEOUT(
      408,
      "request-body-timeout",
      "Request body timed out",
      "The request body did not arrive in time; nothing was executed."),
  /**
   * The client's request body broke the HTTP framing (a bad chunk) or ended before its length: the
   * client's fault, not the upstream's. Nothing was run, or, for a body streamed without a key, the
   * upstream got part of a request it cannot have completed.
   */
  REQUEST_BODY_MALFORMED(
      400,
      "request-body-malformed",
      "Request body is malformed",
      "The request body broke the HTTP framing or ended early; nothing was executed."),
  /** The bodies in memory reached the gateway's cap. Nothing was run. */
  OVERLOADED(
      503,
      "gateway-overloaded",
      "Gateway is overloaded",
      "The gateway holds too many request and response bytes right now; nothing was executed. Retry later.");

  private final StoredResponse response;

  GatewayProblem(int status, String slug, String title, String detail) {
    // Constant text: nothing needs escaping, and no request data ever goes into it.
    byte[] body =
        ("{\"type\":\""
                + ProblemType.BASE_URI
                + slug
                + "\",\"title\":\""
                + title
                + "\",\"status\":"
                + status
                + ",\"detail\":\""
                + detail
                + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    Headers headers =
        status == 503
            ? Headers.of("Content-Type", Problems.MEDIA_TYPE, WireProtocol.RETRY_AFTER_HEADER, "1")
            : Headers.of("Content-Type", Problems.MEDIA_TYPE);
    this.response = new StoredResponse(status, headers, body);
  }

  /**
   * How forwarding failed. {@code sent} says whether the request was handed to a connection: a
   * reused connection may have carried some of it before it broke, so only a failure to open a
   * fresh one is "not sent".
   */
  static GatewayProblem ofUpstream(Throwable failure, boolean sent) {
    if (!sent) {
      return UPSTREAM_UNREACHABLE;
    }
    return causedBy(failure, TimeoutException.class)
            || causedBy(failure, SocketTimeoutException.class)
        ? UPSTREAM_TIMEOUT
        : UPSTREAM_FAILED;
  }

  /**
   * Whether the upstream may have acted on the request: then the key is abandoned, never released.
   */
  boolean ambiguous() {
    return this == UPSTREAM_TIMEOUT || this == UPSTREAM_FAILED;
  }

  StoredResponse response() {
    return response;
  }

  private static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }
}

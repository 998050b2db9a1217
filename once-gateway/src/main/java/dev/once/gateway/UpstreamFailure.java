package dev.once.gateway;

import dev.once.http.ProblemType;
import dev.once.http.Problems;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;

/**
 * How forwarding a request to the upstream failed, and the RFC 9457 problem the client gets. What
 * matters for idempotency is whether the request left the gateway: before, nothing can have
 * happened and the key is released; after, the upstream may have acted, so the outcome is
 * ambiguous and the key stays in progress until its lease ends.
 */
enum UpstreamFailure {

  /** Nothing was sent: connection refused, unresolvable host, connect timeout. Retrying is safe. */
  UNREACHABLE(502, "upstream-unreachable", "Upstream is unreachable",
      "The upstream could not be reached; nothing was sent to it. Retrying is safe."),
  /** The request was sent and no complete response came back within the upstream timeout. */
  TIMEOUT(504, "upstream-timeout", "Upstream timed out",
      "The upstream did not answer in time; the request may have been processed. A retry with the same"
          + " Idempotency-Key is answered 409 until the key's lease ends, then runs again."),
  /** The request was sent and the connection failed before a complete response. */
  FAILED(502, "upstream-failed", "Upstream connection failed",
      "The connection to the upstream failed after the request was sent; the request may have been"
          + " processed. A retry with the same Idempotency-Key is answered 409 until the key's lease ends,"
          + " then runs again.");

  private final int status;
  private final byte[] body;

  UpstreamFailure(int status, String slug, String title, String detail) {
    this.status = status;
    // Constant text: nothing needs escaping, and no request data ever goes into it.
    this.body = ("{\"type\":\"" + ProblemType.BASE_URI + slug + "\",\"title\":\"" + title + "\",\"status\":"
        + status + ",\"detail\":\"" + detail + "\"}").getBytes(StandardCharsets.UTF_8);
  }

  /** Classifies a failure; {@code sent} says whether the upstream request was committed. */
  static UpstreamFailure of(Throwable failure, boolean sent) {
    if (!sent || isConnectFailure(failure)) {
      return UNREACHABLE;
    }
    return causedBy(failure, TimeoutException.class) || causedBy(failure, SocketTimeoutException.class) ? TIMEOUT : FAILED;
  }

  /** Whether the key must stay in progress rather than be released. */
  boolean ambiguous() {
    return this != UNREACHABLE;
  }

  int status() {
    return status;
  }

  String mediaType() {
    return Problems.MEDIA_TYPE;
  }

  byte[] body() {
    return body.clone();
  }

  private static boolean isConnectFailure(Throwable failure) {
    return causedBy(failure, ConnectException.class) || causedBy(failure, UnknownHostException.class)
        || causedBy(failure, NoRouteToHostException.class) || causedBy(failure, UnresolvedAddressException.class);
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

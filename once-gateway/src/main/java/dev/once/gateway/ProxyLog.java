package dev.once.gateway;

import dev.once.http.HttpIdempotency;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;

/**
 * What is told of every request once it has completed, however it completed: the access line
 * ({@link AccessLog}) and the request timer ({@link RequestMetrics}), fed the same facts by either
 * core. Never headers or bodies: the path is without its query, which may carry secrets.
 */
interface ProxyLog {

  /**
   * One completed request: its method and path as the client wrote them, the status answered,
   * whether it was a replay, when its first byte arrived ({@link System#nanoTime}) and the local
   * port.
   */
  void served(String method, String path, int status, boolean replayed, long beganNanos, int port);

  /** Both, in order. */
  static ProxyLog both(ProxyLog first, ProxyLog second) {
    return (method, path, status, replayed, began, port) -> {
      first.served(method, path, status, replayed, began, port);
      second.served(method, path, status, replayed, began, port);
    };
  }

  /** As Jetty's servers report their requests. */
  default RequestLog jetty() {
    return (request, response) ->
        served(
            request.getMethod(),
            request.getHttpURI().getPath(),
            response.getStatus(),
            "true".equals(response.getHeaders().get(HttpIdempotency.REPLAYED_HEADER)),
            request.getBeginNanoTime(),
            Request.getLocalPort(request));
  }
}

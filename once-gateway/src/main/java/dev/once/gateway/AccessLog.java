package dev.once.gateway;

import dev.once.http.HttpIdempotency;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.NanoTime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One line per request on the {@code dev.once.gateway.access} logger, as {@code key=value} pairs:
 * method, path (without the query, which may carry secrets), status, whether it was a replay, and
 * the time taken. Never headers, bodies, keys or credentials.
 */
final class AccessLog implements RequestLog {

  private static final Logger log = LoggerFactory.getLogger("dev.once.gateway.access");

  @Override
  public void log(Request request, Response response) {
    if (!log.isInfoEnabled()) {
      return;
    }
    long micros = TimeUnit.NANOSECONDS.toMicros(NanoTime.since(request.getBeginNanoTime()));
    boolean replayed = "true".equals(response.getHeaders().get(HttpIdempotency.REPLAYED_HEADER));
    log.info(
        "method={} path={} status={} replayed={} duration_ms={}.{} port={}",
        Logs.safe(request.getMethod()),
        Logs.safe(request.getHttpURI().getPath()),
        response.getStatus(),
        replayed,
        micros / 1000,
        String.format("%03d", micros % 1000),
        Request.getLocalPort(request));
  }
}

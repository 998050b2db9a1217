package dev.once.gateway;

import dev.once.http.HttpIdempotency;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.NanoTime;

/**
 * Times every request through the proxy as {@code http.server.requests}, tagged with the method,
 * the status and whether it was a replay: few values each, so the number of series stays small
 * whatever the paths. Fed by Jetty's request log, which sees every request once it has completed,
 * however it completed.
 */
final class RequestMetrics implements RequestLog {

  private final MeterRegistry registry;

  /**
   * Each series registered once, then looked up by its three tags: a request costs no registration.
   */
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();

  RequestMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void log(Request request, Response response) {
    String method = method(request.getMethod());
    String status = Integer.toString(response.getStatus());
    String replayed =
        Boolean.toString("true".equals(response.getHeaders().get(HttpIdempotency.REPLAYED_HEADER)));
    timers
        .computeIfAbsent(
            method + ' ' + status + ' ' + replayed, k -> timer(method, status, replayed))
        .record(
            NanoTime.since(request.getBeginNanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  private Timer timer(String method, String status, String replayed) {
    return Timer.builder("http.server.requests")
        .description(
            "Requests through the proxy, from the first byte received to the last byte sent")
        .tag("method", method)
        .tag("status", status)
        .tag("replayed", replayed)
        // Buckets from 1 ms to 60 s, so dashboards can compute percentiles across instances.
        .publishPercentileHistogram(true)
        .minimumExpectedValue(java.time.Duration.ofMillis(1))
        .maximumExpectedValue(java.time.Duration.ofSeconds(60))
        .register(registry);
  }

  /**
   * Known methods as they are; anything else as one value, so a client cannot create series at
   * will.
   */
  private static String method(String m) {
    return switch (m) {
      case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS" -> m;
      default -> "OTHER";
    };
  }
}

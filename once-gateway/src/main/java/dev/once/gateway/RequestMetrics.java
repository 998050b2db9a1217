package dev.once.gateway;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.util.NanoTime;

/**
 * Times every request through the proxy as {@code http.server.requests}, tagged with the method,
 * the status and whether it was a replay: few values each, so the number of series stays small
 * whatever the paths. Fed once a request has completed, however it completed: by Jetty's request
 * log, or as a {@link ProxyLog} by the Netty core.
 */
final class RequestMetrics implements ProxyLog {

  private final MeterRegistry registry;

  /**
   * Each series registered once, then looked up by its three tags: a request costs no registration.
   */
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();

  RequestMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void served(
      String method, String path, int status, boolean replayed, long beganNanos, int port) {
    String m = method(method);
    String code = Integer.toString(status);
    String replay = Boolean.toString(replayed);
    timers
        .computeIfAbsent(m + ' ' + code + ' ' + replay, k -> timer(m, code, replay))
        .record(NanoTime.since(beganNanos), java.util.concurrent.TimeUnit.NANOSECONDS);
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

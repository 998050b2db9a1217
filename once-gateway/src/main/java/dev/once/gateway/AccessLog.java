package dev.once.gateway;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.util.NanoTime;

/**
 * One line per request as {@code key=value} pairs: method, path (without the query, which may carry
 * secrets), status, whether it was a replay, the time taken and the port. Never headers, bodies,
 * keys or credentials. The line has the shape of the gateway's other log lines (time, level,
 * logger, message: {@code 2026-11-30T11:12:59.123Z INFO access - method=POST …}) and goes to {@link
 * AccessLines}, which writes them in batches.
 */
final class AccessLog implements ProxyLog {

  /**
   * The time up to the second; the milliseconds and the offset are appended to it. Together the
   * pattern of the other lines, {@code org.slf4j.simpleLogger.dateTimeFormat} in
   * simplelogger.properties ({@code SecurityTest} compares the two in one output).
   */
  private static final DateTimeFormatter SECOND =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.");

  private static final DateTimeFormatter OFFSET = DateTimeFormatter.ofPattern("XXX");

  private final AccessLines lines;
  private final ZoneId zone = ZoneId.systemDefault();

  /** The current second's text; replaced when a line falls in another second. */
  private volatile Stamp stamp = new Stamp(Long.MIN_VALUE, "", "");

  AccessLog(AccessLines lines) {
    this.lines = lines;
  }

  @Override
  public void served(
      String method, String path, int status, boolean replayed, long beganNanos, int port) {
    long micros = TimeUnit.NANOSECONDS.toMicros(NanoTime.since(beganNanos));
    long now = System.currentTimeMillis();
    Stamp s = stamp(Math.floorDiv(now, 1000));
    long ms = Math.floorMod(now, 1000);
    StringBuilder line = new StringBuilder(160).append(s.second);
    threeDigits(line, ms)
        .append(s.offset)
        .append(" INFO access - method=")
        .append(Logs.safe(method))
        .append(" path=")
        .append(Logs.safe(path))
        .append(" status=")
        .append(status)
        .append(" replayed=")
        .append(replayed)
        .append(" duration_ms=")
        .append(micros / 1000)
        .append('.');
    threeDigits(line, micros % 1000).append(" port=").append(port);
    lines.add(line);
  }

  private Stamp stamp(long epochSecond) {
    Stamp s = stamp;
    if (s.epochSecond != epochSecond) {
      // Two threads may both make it in a new second: either result is right.
      var at = Instant.ofEpochSecond(epochSecond).atZone(zone);
      s = new Stamp(epochSecond, SECOND.format(at), OFFSET.format(at));
      stamp = s;
    }
    return s;
  }

  private static StringBuilder threeDigits(StringBuilder line, long n) {
    if (n < 100) {
      line.append('0');
    }
    if (n < 10) {
      line.append('0');
    }
    return line.append(n);
  }

  /** One second's text: the time up to its seconds and the zone's offset then. */
  private record Stamp(long epochSecond, String second, String offset) {}
}

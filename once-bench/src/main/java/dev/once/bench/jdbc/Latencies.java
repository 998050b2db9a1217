package dev.once.bench.jdbc;

import java.util.Arrays;

/** Latencies of one run, in nanoseconds, and their summary: throughput and percentiles. */
final class Latencies {

  private final long[] nanos;
  private final double seconds;

  Latencies(long[] nanos, double seconds) {
    this.nanos = nanos.clone();
    Arrays.sort(this.nanos);
    this.seconds = seconds;
  }

  int count() {
    return nanos.length;
  }

  double perSecond() {
    return nanos.length / seconds;
  }

  /** The {@code p}-th percentile in milliseconds (nearest rank). */
  double percentileMillis(double p) {
    if (nanos.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p / 100.0 * nanos.length);
    return nanos[Math.max(0, Math.min(nanos.length - 1, rank - 1))] / 1e6;
  }

  @Override
  public String toString() {
    return String.format(
        "%8.0f ops/s  p50 %6.2f ms  p99 %7.2f ms  p99.9 %7.2f ms  (n=%d)",
        perSecond(), percentileMillis(50), percentileMillis(99), percentileMillis(99.9), count());
  }
}

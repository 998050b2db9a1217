package dev.once.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

/**
 * Durations and instants as the scripts see them: whole microseconds, sent as decimal ASCII.
 *
 * <p>Lua numbers are doubles, exact up to 2^53 microseconds, about 285 years after 1970. Durations
 * are capped at {@link #MAX} so that the server's clock plus any lease, TTL and retention stays
 * below that: a longer duration means "practically never", not an error in the middle of a claim.
 */
final class Micros {

  /** The longest duration the scripts are given; longer ones are capped. */
  static final Duration MAX = Duration.ofDays(36_500);

  private Micros() {}

  static byte[] of(Duration d) {
    return ascii(toMicros(d));
  }

  static long toMicros(Duration d) {
    Duration capped = d.compareTo(MAX) > 0 ? MAX : d;
    // Round up: a positive duration below a microsecond must not become zero.
    return capped.getSeconds() * 1_000_000L + (capped.getNano() + 999) / 1000;
  }

  static byte[] ascii(long value) {
    return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
  }

  static Instant toInstant(long micros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
  }
}

package dev.once.client;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with full jitter: before retry {@code n} (1 for the first), wait a uniformly
 * random time between zero and {@code min(max, initial * 2^(n-1))}. Spreading the whole interval
 * rather than adding a little noise keeps a crowd of clients that failed together from coming back
 * together.
 */
record Backoff(Duration initial, Duration max) {

  Duration delay(int retry, RandomGenerator random) {
    long initialNanos = initial.toNanos();
    long maxNanos = max.toNanos();
    int shift = Math.min(Math.max(retry - 1, 0), 62);
    long cap = initialNanos > (maxNanos >> shift) ? maxNanos : initialNanos << shift;
    return Duration.ofNanos(random.nextLong(cap + 1));
  }
}

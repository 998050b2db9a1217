package dev.once.outbox;

import dev.once.internal.ExponentialBackoff;
import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * How long a message waits before its next attempt: {@code initial × multiplier^(attempt−1)}, at
 * most {@code max}, of which a random share up to {@code jitter} is taken off, so that rows that
 * failed together (a downstream outage) do not all come back in the same instant. The computation
 * is the one the HTTP client's retries use too.
 *
 * @param initial the wait after the first failed attempt; positive
 * @param max the longest wait; at least {@code initial}
 * @param multiplier growth per attempt; at least 1
 * @param jitter the share of each wait that is random, from 0 (none) to 1 ("full jitter")
 */
public record Backoff(Duration initial, Duration max, double multiplier, double jitter) {

  /** 1 s, doubling up to 5 min, with half of each wait random. */
  public static final Backoff DEFAULT =
      new Backoff(Duration.ofSeconds(1), Duration.ofMinutes(5), 2.0, 0.5);

  public Backoff {
    if (initial == null || initial.isNegative() || initial.isZero()) {
      throw new IllegalArgumentException("initial must be positive; was " + initial);
    }
    if (max == null || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException(
          "max must be at least initial (" + initial + "); was " + max);
    }
    if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException(
          "multiplier must be a finite number of at least 1; was " + multiplier);
    }
    if (!(jitter >= 0.0 && jitter <= 1.0)) {
      throw new IllegalArgumentException("jitter must be between 0 and 1; was " + jitter);
    }
  }

  /**
   * Exponential backoff from {@code initial} up to {@code max}, doubling, with half of each wait
   * random.
   */
  public static Backoff exponential(Duration initial, Duration max) {
    return new Backoff(initial, max, 2.0, 0.5);
  }

  /** The same waits without randomness: for tests and for deterministic schedules. */
  public Backoff withoutJitter() {
    return new Backoff(initial, max, multiplier, 0.0);
  }

  /** The wait after failed attempt number {@code attempt} (1 for the first). */
  public Duration delay(int attempt, RandomGenerator random) {
    if (attempt < 1) {
      throw new IllegalArgumentException("attempt must be at least 1; was " + attempt);
    }
    return ExponentialBackoff.delay(initial, max, multiplier, jitter, attempt, random);
  }
}

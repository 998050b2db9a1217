package dev.once.internal;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * The one computation of a wait before a retry, shared by the HTTP client (full jitter, doubling)
 * and the outbox relay (its configurable {@code Backoff}), so that both back off alike.
 *
 * <p>Internal: shared by Once's modules, not part of its API.
 */
public final class ExponentialBackoff {

  private ExponentialBackoff() {}

  /**
   * The wait after failed attempt {@code attempt} (1 for the first): {@code initial ×
   * multiplier^(attempt−1)}, at most {@code max}, of which a random share of up to {@code jitter}
   * is taken off. Jitter 1 is "full jitter": uniform between zero and the cap, which keeps a crowd
   * of callers that failed together (a downstream outage) from coming back together. The caller has
   * validated the options.
   */
  public static Duration delay(
      Duration initial,
      Duration max,
      double multiplier,
      double jitter,
      int attempt,
      RandomGenerator random) {
    double nanos = initial.toNanos() * Math.pow(multiplier, attempt - 1.0);
    double capped = Math.min(nanos, (double) max.toNanos());
    double taken = jitter == 0.0 ? 0.0 : capped * jitter * random.nextDouble();
    return Duration.ofNanos((long) (capped - taken));
  }
}

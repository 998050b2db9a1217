package dev.once.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class BackoffTest {

  /** Always the top of the asked range, so that a wait equals its cap. */
  static final RandomGenerator TOP = new RandomGenerator() {
    @Override
    public long nextLong() {
      return 0;
    }

    @Override
    public long nextLong(long bound) {
      return bound - 1;
    }
  };

  private final Backoff backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(2));

  @Test
  void theCapDoublesPerRetryUpToTheMaximum() {
    assertThat(backoff.delay(1, TOP)).isEqualTo(Duration.ofMillis(100));
    assertThat(backoff.delay(2, TOP)).isEqualTo(Duration.ofMillis(200));
    assertThat(backoff.delay(3, TOP)).isEqualTo(Duration.ofMillis(400));
    assertThat(backoff.delay(5, TOP)).isEqualTo(Duration.ofMillis(1600));
    assertThat(backoff.delay(6, TOP)).isEqualTo(Duration.ofSeconds(2));
    assertThat(backoff.delay(100, TOP)).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void fullJitterSpreadsWaitsOverTheWholeRange() {
    SplittableRandom random = new SplittableRandom(42);
    long below = 0;
    long above = 0;
    for (int i = 0; i < 10_000; i++) {
      Duration d = backoff.delay(3, random);
      assertThat(d).isBetween(Duration.ZERO, Duration.ofMillis(400));
      if (d.compareTo(Duration.ofMillis(100)) < 0) {
        below++;
      } else if (d.compareTo(Duration.ofMillis(300)) > 0) {
        above++;
      }
    }
    // Uniform over [0, 400 ms]: about a quarter in each outer quarter.
    assertThat(below).isBetween(2_000L, 3_000L);
    assertThat(above).isBetween(2_000L, 3_000L);
  }

  @Test
  void theFirstRetryIsRetryOne() {
    assertThat(backoff.delay(0, TOP)).isEqualTo(Duration.ofMillis(100));
  }
}

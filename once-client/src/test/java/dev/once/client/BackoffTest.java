package dev.once.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class BackoffTest {

  /** Always the top of the asked range (no share taken off), so that a wait equals its cap. */
  static final RandomGenerator TOP =
      new RandomGenerator() {
        @Override
        public long nextLong() {
          return 0;
        }

        @Override
        public long nextLong(long bound) {
          return bound - 1;
        }
      };

  private static OnceHttpClient client(RandomGenerator random) {
    return OnceHttpClient.builder()
        .initialBackoff(Duration.ofMillis(100))
        .maxBackoff(Duration.ofSeconds(2))
        .random(random)
        .build();
  }

  @Test
  void theCapDoublesPerRetryUpToTheMaximum() {
    OnceHttpClient backoff = client(TOP);
    assertThat(backoff.backoff(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(backoff.backoff(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(backoff.backoff(3)).isEqualTo(Duration.ofMillis(400));
    assertThat(backoff.backoff(5)).isEqualTo(Duration.ofMillis(1600));
    assertThat(backoff.backoff(6)).isEqualTo(Duration.ofSeconds(2));
    assertThat(backoff.backoff(100)).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void fullJitterSpreadsWaitsOverTheWholeRange() {
    OnceHttpClient backoff = client(new SplittableRandom(42));
    long below = 0;
    long above = 0;
    for (int i = 0; i < 10_000; i++) {
      Duration d = backoff.backoff(3);
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
    OnceHttpClient backoff = client(TOP);
    assertThat(backoff.backoff(0)).isEqualTo(Duration.ofMillis(100));
  }
}

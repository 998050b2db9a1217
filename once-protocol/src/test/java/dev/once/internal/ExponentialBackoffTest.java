package dev.once.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ExponentialBackoffTest {

  private static final Duration INITIAL = Duration.ofMillis(100);
  private static final Duration MAX = Duration.ofSeconds(1);

  @Test
  void withoutJitterTheWaitGrowsByTheMultiplierUpToTheMaximum() {
    SplittableRandom random = new SplittableRandom(1);
    assertThat(ExponentialBackoff.delay(INITIAL, MAX, 2.0, 0.0, 1, random))
        .isEqualTo(Duration.ofMillis(100));
    assertThat(ExponentialBackoff.delay(INITIAL, MAX, 3.0, 0.0, 3, random))
        .isEqualTo(Duration.ofMillis(900));
    assertThat(ExponentialBackoff.delay(INITIAL, MAX, 2.0, 0.0, 10_000, random)).isEqualTo(MAX);
  }

  @Test
  void fullJitterSpreadsTheWaitFromZeroToTheCap() {
    SplittableRandom random = new SplittableRandom(42);
    long lowerHalf = 0;
    for (int i = 0; i < 10_000; i++) {
      Duration d = ExponentialBackoff.delay(INITIAL, MAX, 2.0, 1.0, 3, random);
      assertThat(d).isBetween(Duration.ZERO, Duration.ofMillis(400));
      if (d.compareTo(Duration.ofMillis(200)) < 0) {
        lowerHalf++;
      }
    }
    assertThat(lowerHalf).isBetween(4_500L, 5_500L);
  }
}

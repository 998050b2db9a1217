package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class BackoffTest {

  @Test
  void waitsGrowByTheMultiplierUpToTheMaximum() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2.0, 0.0);
    SplittableRandom random = new SplittableRandom(1);
    assertThat(b.delay(1, random)).isEqualTo(Duration.ofMillis(100));
    assertThat(b.delay(2, random)).isEqualTo(Duration.ofMillis(200));
    assertThat(b.delay(4, random)).isEqualTo(Duration.ofMillis(800));
    assertThat(b.delay(5, random)).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.delay(10_000, random)).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void jitterTakesARandomShareOffEachWait() {
    Backoff b = Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(1));
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 1_000; i++) {
      assertThat(b.delay(3, random)).isBetween(Duration.ofSeconds(2), Duration.ofSeconds(4));
    }
    assertThat(b.withoutJitter().delay(3, random)).isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void badOptionsAreRejectedByName() {
    assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1), 2, 0))
        .hasMessageContaining("initial");
    assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1), 2, 0))
        .hasMessageContaining("max");
    assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 0.5, 0))
        .hasMessageContaining("multiplier");
    assertThatThrownBy(
            () -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), Double.NaN, 0))
        .hasMessageContaining("multiplier");
    assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(1), 2, 1.5))
        .hasMessageContaining("jitter");
    assertThatThrownBy(() -> Backoff.DEFAULT.delay(0, new SplittableRandom()))
        .hasMessageContaining("attempt");
  }
}

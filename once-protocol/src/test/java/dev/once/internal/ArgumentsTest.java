package dev.once.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ArgumentsTest {

  @Test
  void aMissingOptionIsABadValueNamedLikeAnyOther() {
    assertThatThrownBy(() -> Arguments.positive("lease", null))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("lease must be positive, was null");
    assertThatThrownBy(() -> Arguments.between("ttl", null, Duration.ZERO, Duration.ofDays(1)))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("ttl ");
    assertThatThrownBy(() -> Arguments.present("clock", null))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("clock must be set, was null");
  }

  @Test
  void eachCheckNamesTheOptionAndTheValue() {
    assertThatThrownBy(() -> Arguments.positive("lease", Duration.ZERO))
        .hasMessage("lease must be positive, was PT0S");
    assertThatThrownBy(() -> Arguments.positive("deadline", Duration.ofDays(2), Duration.ofDays(1)))
        .hasMessage("deadline must be positive and at most PT24H, was PT48H");
    assertThatThrownBy(() -> Arguments.between("port", 70000, 0, 65535))
        .hasMessage("port must be between 0 and 65535, was 70000");
  }

  @Test
  void goodValuesPassThrough() {
    assertThat(Arguments.positive("lease", Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
    assertThat(Arguments.between("delay", Duration.ZERO, Duration.ZERO, Duration.ofHours(1)))
        .isEqualTo(Duration.ZERO);
    assertThat(Arguments.between("port", 0, 0, 65535)).isZero();
    assertThat(Arguments.present("name", "x")).isEqualTo("x");
  }
}

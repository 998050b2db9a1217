package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogsTest {

  @Test
  void everyCharacterThatCouldStartAnotherLineIsEscaped() {
    assertThat(Logs.safe("/a\nb\rc\td\u0000e\u007ff\u0085g\u009fh\u2028i\u2029j"))
        .isEqualTo("/a\\x0ab\\x0dc\\x09d\\x00e\\x7ff\\x85g\\x9fh\\u2028i\\u2029j")
        .doesNotContain("\n", "\r", "\u0085", "\u2028", "\u2029");
  }

  @Test
  void ordinaryTextIsLeftAsItIs() {
    String path = "/payments/ü/€/x%0Ay?";
    assertThat(Logs.safe(path)).isSameAs(path);
    assertThat(Logs.safe(null)).isEqualTo("-");
  }
}

package dev.once.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HttpTokenTest {

  @Test
  void lettersDigitsAndTheSymbolsOfRfc9110AreTokens() {
    assertThat(HttpToken.is("POST", 64)).isTrue();
    assertThat(HttpToken.is("Idempotency-Key", 64)).isTrue();
    assertThat(HttpToken.is("x!#$%&'*+-.^_`|~09", 64)).isTrue();
  }

  @Test
  void delimitersSpacesControlsAndNonAsciiAreNot() {
    for (String text :
        new String[] {"}POST", "PO{ST", "PO\"ST", "PO/ST", "PO ST", "PO\tST", "POßT"}) {
      assertThat(HttpToken.is(text, 64)).as(text).isFalse();
    }
  }

  @Test
  void anEmptyTextAndOneOverTheLimitAreNot() {
    assertThat(HttpToken.is("", 64)).isFalse();
    assertThat(HttpToken.is("a".repeat(64), 64)).isTrue();
    assertThat(HttpToken.is("a".repeat(65), 64)).isFalse();
  }
}

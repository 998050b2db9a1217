package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class IdempotencyKeyTest {

  @ParameterizedTest(name = "[{index}] {0} -> {1}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '\'',
      value = {
        "abc|abc",
        "'\"abc\"'|abc",
        "'  abc\t'|abc",
        "'\"a\\\"b\"'|a\"b",
        "'\"a\\\\b\"'|a\\b",
        "0190a5e4-7c1e-7d2b-9c3a-1f2e3d4c5b6a|0190a5e4-7c1e-7d2b-9c3a-1f2e3d4c5b6a",
        "'a\"b'|a\"b",
        "'a,b'|a,b",
      })
  void headerValuesInBothFormsParseToTheKey(String header, String expected) {
    assertThat(IdempotencyKey.parseHeader(header).value()).isEqualTo(expected);
  }

  @Test
  void everyPrintableAsciiCharacterIsAllowed() {
    StringBuilder sb = new StringBuilder();
    for (char c = 0x21; c <= 0x7E; c++) {
      sb.append(c);
    }
    assertThat(IdempotencyKey.of(sb.toString()).value()).hasSize(94);
  }

  @Test
  void theLongestKeyIs255Characters() {
    assertThat(IdempotencyKey.of("k".repeat(255)).value()).hasSize(255);
    assertThatThrownBy(() -> IdempotencyKey.of("k".repeat(256)))
        .isInstanceOf(InvalidIdempotencyKeyException.class);
  }

  @Test
  void aQuotedKeyWithASpaceIsRejectedBecauseKeysAreSpaceFree() {
    assertThatThrownBy(() -> IdempotencyKey.parseHeader("\"a b\""))
        .isInstanceOf(InvalidIdempotencyKeyException.class);
  }
}

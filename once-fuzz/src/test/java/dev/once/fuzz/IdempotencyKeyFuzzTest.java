package dev.once.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.once.IdempotencyKey;
import dev.once.InvalidIdempotencyKeyException;

/**
 * The {@code Idempotency-Key} header parser, fed any string: it returns a valid key or throws
 * {@link InvalidIdempotencyKeyException}, nothing else; and a key it returns survives being sent
 * again in either spelling (quoted sf-string or bare).
 */
class IdempotencyKeyFuzzTest {

  @FuzzTest(maxDuration = "15s")
  void headerValuesParseToAValidKeyOrATypedError(FuzzedDataProvider data) {
    String header = data.consumeRemainingAsString();
    IdempotencyKey key;
    try {
      key = IdempotencyKey.parseHeader(header);
    } catch (InvalidIdempotencyKeyException expected) {
      assertThat(expected.getMessage()).isNotBlank();
      assertRawValueAgrees(header);
      return;
    }
    String value = key.value();
    assertThat(value.length()).isBetween(1, IdempotencyKey.MAX_LENGTH);
    assertThat(value.chars()).allMatch(c -> c >= 0x21 && c <= 0x7E);
    assertThat(IdempotencyKey.parseHeader(quoted(value))).isEqualTo(key);
    if (value.charAt(0) != '"') {
      assertThat(IdempotencyKey.parseHeader(value)).isEqualTo(key);
    }
    assertThat(IdempotencyKey.of(value)).isEqualTo(key);
    assertRawValueAgrees(header);
  }

  /** {@code of} is the unquoted form: valid exactly when every character is printable ASCII. */
  private static void assertRawValueAgrees(String raw) {
    boolean valid =
        !raw.isEmpty()
            && raw.length() <= IdempotencyKey.MAX_LENGTH
            && raw.chars().allMatch(c -> c >= 0x21 && c <= 0x7E);
    try {
      assertThat(IdempotencyKey.of(raw).value()).isEqualTo(raw);
      assertThat(valid).as("of(%s) accepted an invalid key", raw).isTrue();
    } catch (InvalidIdempotencyKeyException e) {
      assertThat(valid).as("of(%s) refused a valid key", raw).isFalse();
    }
  }

  /** The RFC 8941 sf-string spelling of a key. */
  static String quoted(String value) {
    StringBuilder sb = new StringBuilder(value.length() + 2).append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.append('"').toString();
  }
}

package dev.once.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The syntax itself is tested through {@code IdempotencyKeyTest} in once-core; this is the seam.
 */
class KeySyntaxTest {

  static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message);
    }
  }

  @Test
  void theCallerChoosesTheExceptionAndGetsTheReason() {
    assertThatThrownBy(() -> KeySyntax.check("", Refused::new))
        .isInstanceOf(Refused.class)
        .hasMessage("idempotency key is empty");
    assertThatThrownBy(() -> KeySyntax.parseHeader("\"a", Refused::new))
        .isInstanceOf(Refused.class)
        .hasMessageContaining("unterminated");
  }

  @Test
  void aHeaderValueIsUnquotedAndChecked() {
    assertThat(KeySyntax.parseHeader("  \"a\\\"b\" ", Refused::new)).isEqualTo("a\"b");
    assertThat(KeySyntax.parseHeader("abc", Refused::new)).isEqualTo("abc");
    assertThatThrownBy(() -> KeySyntax.parseHeader("\"a b\u007f\"", Refused::new))
        .isInstanceOf(Refused.class);
  }
}

package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ScopeTest {

  @Test
  void partsAreJoinedWithASlashAndKeptAsTheyAreWhenNothingNeedsEncoding() {
    assertThat(Scope.of("tenant-7", "POST /charges").value()).isEqualTo("tenant-7/POST %2Fcharges");
    assertThat(Scope.of("tenant-7", "payments").value()).isEqualTo("tenant-7/payments");
    assertThat(Scope.of("only").value()).isEqualTo("only");
  }

  @Test
  void aSlashOrAPercentInsideAPartIsEncodedSoThatDistinctPartListsNeverCollide() {
    assertThat(Scope.of("a/b").value()).isEqualTo("a%2Fb");
    assertThat(Scope.of("a", "b").value()).isEqualTo("a/b");
    assertThat(Scope.of("a%2Fb").value()).isEqualTo("a%252Fb");
    assertThat(Scope.of("100%", "/", "").value()).isEqualTo("100%25/%2F/");
    assertThat(Scope.of("a/b")).isNotEqualTo(Scope.of("a", "b"));
    assertThat(Scope.of("a%2Fb")).isNotEqualTo(Scope.of("a/b"));
  }

  @Test
  void partsThatAreMissingOrMakeNoValidScopeAreRefused() {
    assertThatThrownBy(() -> Scope.of()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Scope.of("a", null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("part 1 is null");
    assertThatThrownBy(() -> Scope.of(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> Scope.of("a\nb"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("control character");
    assertThatThrownBy(() -> Scope.of("x".repeat(Scope.MAX_LENGTH), "y"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most " + Scope.MAX_LENGTH);
  }
}

package dev.once.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.once.Scope;
import java.util.ArrayList;
import java.util.List;

/**
 * Scopes from any parts: {@link Scope#of} returns a scope or throws {@link
 * IllegalArgumentException}; distinct part lists never give the same scope (tenant isolation rests
 * on this); and {@link Scope#hash} of any secret is a valid part that does not contain the secret.
 */
class ScopeFuzzTest {

  @FuzzTest(maxDuration = "15s")
  void partsNeverCollideAndOnlyTypedErrorsEscape(FuzzedDataProvider data) {
    List<String> parts = new ArrayList<>();
    int count = data.consumeInt(1, 4);
    for (int i = 0; i < count; i++) {
      parts.add(data.consumeString(200));
    }
    Scope scope;
    try {
      scope = Scope.of(parts.toArray(String[]::new));
    } catch (IllegalArgumentException expected) {
      return;
    }
    assertThat(decode(scope.value())).isEqualTo(parts);
    assertThat(new Scope(scope.value())).isEqualTo(scope);

    String secret = parts.get(0);
    String hashed = Scope.hash(secret);
    assertThat(hashed).matches("sha256:[0-9a-f]{64}");
    assertThat(Scope.of(hashed, "POST /x").value()).startsWith(hashed);
  }

  /** The inverse of {@link Scope#of}'s encoding: if it exists, part lists cannot collide. */
  private static List<String> decode(String value) {
    List<String> parts = new ArrayList<>();
    StringBuilder part = new StringBuilder();
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '/') {
        parts.add(part.toString());
        part.setLength(0);
      } else if (value.startsWith("%25", i)) {
        part.append('%');
        i += 2;
      } else if (value.startsWith("%2F", i)) {
        part.append('/');
        i += 2;
      } else {
        assertThat(c).as("a bare %% in %s", value).isNotEqualTo('%');
        part.append(c);
      }
    }
    parts.add(part.toString());
    return parts;
  }
}

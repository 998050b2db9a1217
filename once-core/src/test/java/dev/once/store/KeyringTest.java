package dev.once.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Base64;
import org.junit.jupiter.api.Test;

class KeyringTest {

  private static final byte[] K16 = new byte[16];
  private static final byte[] K32 = new byte[32];
  private static final String SECRET_B64 =
      Base64.getEncoder().encodeToString("0123456789abcdef0123456789abcdef".getBytes());

  @Test
  void theFirstKeyOfASpecIsActiveAndTheOthersRetired() {
    Keyring k =
        Keyring.parse("k2:" + SECRET_B64 + ", k1:" + Base64.getEncoder().encodeToString(K16));

    assertThat(k.activeId()).isEqualTo("k2");
    assertThat(k.ids()).containsExactly("k2", "k1");
  }

  @Test
  void theActiveKeyIsListedFirstWhateverTheOrderItWasAddedIn() {
    Keyring k = Keyring.builder().retired("old", K16).active("new", K32).build();
    assertThat(k.ids()).containsExactly("new", "old");
  }

  @Test
  void toStringAndErrorsNeverShowKeyMaterial() {
    Keyring k = Keyring.parse("k2:" + SECRET_B64);
    assertThat(k.toString()).isEqualTo("Keyring[active=k2, ids=[k2]]");
    assertThatThrownBy(() -> Keyring.parse("k2:" + SECRET_B64 + ",k1:" + SECRET_B64.substring(4)))
        .isInstanceOf(IllegalArgumentException.class)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(SECRET_B64.substring(4, 20)));
  }

  @Test
  void badKeysAndIdsAreRefusedNamingTheProblem() {
    assertThatThrownBy(() -> Keyring.builder().active("k", new byte[15]))
        .hasMessageContaining("16, 24 or 32 bytes");
    assertThatThrownBy(() -> Keyring.builder().active("bad id", K16))
        .hasMessageContaining("key id");
    assertThatThrownBy(() -> Keyring.builder().active("x".repeat(65), K16))
        .hasMessageContaining("key id");
    assertThatThrownBy(() -> Keyring.builder().active("k", K16).retired("k", K32))
        .hasMessageContaining("twice");
    assertThatThrownBy(() -> Keyring.builder().active("a", K16).active("b", K16))
        .hasMessageContaining("already active");
    assertThatThrownBy(() -> Keyring.builder().retired("a", K16).build())
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> Keyring.parse("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Keyring.parse("nocolon")).hasMessageContaining("entry 1");
    assertThatThrownBy(() -> Keyring.parse("k:not-base64!")).hasMessageContaining("not base64");
  }

  @Test
  void theBuilderCopiesTheKeySoLaterChangesToTheArrayDoNotLeakIn() {
    byte[] key = new byte[16];
    Keyring k = Keyring.builder().active("k", key).build();
    key[0] = 1;
    assertThat(k.activeKey().getEncoded()[0]).isZero();
  }
}

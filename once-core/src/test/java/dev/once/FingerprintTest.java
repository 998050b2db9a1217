package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FingerprintTest {

  private static final Fingerprint V1 = new Fingerprint(1, "11".repeat(32));
  private static final Fingerprint V2 = new Fingerprint(2, "22".repeat(32), V1);

  @Test
  void aRecordOfTheSameVersionMatchesByDigest() {
    assertThat(V2.matches(new Fingerprint(2, "22".repeat(32)))).isTrue();
    assertThat(V2.matches(new Fingerprint(2, "33".repeat(32)))).isFalse();
  }

  @Test
  void aRecordOfThePreviousVersionMatchesThroughThePreviousFingerprint() {
    assertThat(V2.matches(Fingerprint.parse("1:" + "11".repeat(32)))).isTrue();
    assertThat(V2.matches(Fingerprint.parse("1:" + "22".repeat(32)))).isFalse();
  }

  @Test
  void aRecordOfAVersionTheFingerprintDoesNotCarryMatchesNothing() {
    assertThat(V2.matches(new Fingerprint(3, "22".repeat(32)))).isFalse();
    assertThat(new Fingerprint(2, "22".repeat(32)).matches(V1)).isFalse();
    assertThat(new Fingerprint(3, "33".repeat(32), new Fingerprint(2, "22".repeat(32))).matches(V1))
        .isFalse();
  }

  @Test
  void aFingerprintReadBackFromAStoreEqualsTheOneWritten() {
    Fingerprint stored = Fingerprint.parse(V2.encoded());
    assertThat(stored.previous()).isNull();
    assertThat(stored).isEqualTo(V2).hasSameHashCodeAs(V2);
    assertThat(V2.encoded()).isEqualTo(V2.toString()).isEqualTo("2:" + "22".repeat(32));
  }

  @Test
  void aPreviousFingerprintMustBeOfAnOlderVersion() {
    assertThatThrownBy(() -> new Fingerprint(1, "11".repeat(32), V2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("older version");
    assertThatThrownBy(
            () -> new Fingerprint(2, "11".repeat(32), new Fingerprint(2, "22".repeat(32))))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void matchingANullRecordIsAProgrammingError() {
    assertThatThrownBy(() -> V2.matches(null)).isInstanceOf(NullPointerException.class);
  }
}

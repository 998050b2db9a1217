package dev.once.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.once.Fingerprint;
import dev.once.fingerprint.Fingerprinter;
import dev.once.fingerprint.InvalidJsonException;
import dev.once.fingerprint.JsonCanonicalizer;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.function.UnaryOperator;

/**
 * The RFC 8785 canonicaliser, the exact-number form fingerprints hash, and the fingerprints built
 * on it, fed any bytes:
 *
 * <ul>
 *   <li>canonicalising, either way, throws nothing but {@link InvalidJsonException};
 *   <li>the output is valid UTF-8 and canonical: canonicalising it again is the identity;
 *   <li>a body and its exact canonical form have the same JSON fingerprint (equal after parsing,
 *       equal fingerprints), and a body that is not JSON is fingerprinted as raw bytes;
 *   <li>{@link Fingerprinter#json} never throws, with or without exclusions.
 * </ul>
 */
class CanonicalJsonFuzzTest {

  private static final Fingerprinter EXCLUDING =
      Fingerprinter.builder()
          .exclude("/a")
          .exclude("/0")
          .exclude("/items/1/ts")
          .exclude("/~1~0")
          .build();

  @FuzzTest(maxDuration = "15s")
  void canonicalFormIsIdempotentAndFingerprintsAgree(FuzzedDataProvider data) {
    byte[] body = data.consumeRemainingAsBytes();
    assertCanonicalOrRejected(body, JsonCanonicalizer::canonicalize);
    byte[] canonical = assertCanonicalOrRejected(body, JsonCanonicalizer::canonicalizeExact);
    if (canonical == null) {
      assertThat(Fingerprinter.defaults().json(body, "POST", "/x"))
          .isEqualTo(Fingerprinter.defaults().raw(body, "POST", "/x"));
      EXCLUDING.json(body, "POST", "/x");
      return;
    }
    Fingerprint original = Fingerprinter.defaults().json(body, "POST", "/x");
    assertThat(Fingerprinter.defaults().json(canonical, "POST", "/x")).isEqualTo(original);
    assertThat(Fingerprinter.defaults().json(canonical, "POST", "/y")).isNotEqualTo(original);
    assertThat(EXCLUDING.json(body, "POST", "/x"))
        .isEqualTo(EXCLUDING.json(canonical, "POST", "/x"));
  }

  /**
   * Returns the canonical form after checking it, or null if the body was rejected as it should be.
   */
  private static byte[] assertCanonicalOrRejected(
      byte[] body, UnaryOperator<byte[]> canonicalizer) {
    byte[] canonical;
    try {
      canonical = canonicalizer.apply(body);
    } catch (InvalidJsonException notJson) {
      assertThat(notJson.offset()).isBetween(0, body.length);
      return null;
    }
    assertValidUtf8(canonical);
    assertThat(canonicalizer.apply(canonical)).isEqualTo(canonical);
    return canonical;
  }

  private static void assertValidUtf8(byte[] bytes) {
    try {
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes));
    } catch (CharacterCodingException e) {
      throw new AssertionError("canonical output is not UTF-8", e);
    }
  }
}

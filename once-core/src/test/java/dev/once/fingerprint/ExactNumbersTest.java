package dev.once.fingerprint;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Fingerprint;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Fingerprints never let two different numbers collide (DESIGN §1), as RFC 8785's doubles would:
 * numbers keep their exact value, laid out as ECMAScript lays out a double's digits.
 */
class ExactNumbersTest {

  @Test
  void integersAboveTwoToThe53DoNotCollide() {
    assertThat(fingerprint("{\"id\":12345678901234567891}"))
        .isNotEqualTo(fingerprint("{\"id\":12345678901234567892}"));
    assertThat(fingerprint("9007199254740993")).isNotEqualTo(fingerprint("9007199254740992"));
  }

  @Test
  void longDecimalsDoNotCollideWithTheDoubleTheyRoundTo() {
    assertThat(fingerprint("0.10000000000000000001")).isNotEqualTo(fingerprint("0.1"));
    assertThat(fingerprint("333333333.33333329")).isNotEqualTo(fingerprint("333333333.3333333"));
  }

  @Test
  void numbersTooSmallForADoubleDoNotCollideWithZero() {
    assertThat(fingerprint("1e-400"))
        .isNotEqualTo(fingerprint("0"))
        .isNotEqualTo(fingerprint("2e-400"));
  }

  @Test
  void aDoubleWrittenInFullIsNotTheShorterNumberJcsWouldWriteForIt() {
    // 2^60 is a double, and JCS writes it 1152921504606847000: a different number, so not here.
    assertThat(exact("1152921504606846976")).isEqualTo("1152921504606846976");
    assertThat(fingerprint("1152921504606846976")).isNotEqualTo(fingerprint("1152921504606847000"));
  }

  @Test
  void spellingsOfOneValueStillShareAFingerprint() {
    assertThat(fingerprint("[1.0,1e0,10e-1,0.1E+1,100e-2]")).isEqualTo(fingerprint("[1,1,1,1,1]"));
    assertThat(
            fingerprint(
                "[12345678901234567891.000, 1.2345678901234567891e19, 123456789012345678910E-1]"))
        .isEqualTo(fingerprint("[12345678901234567891,12345678901234567891,12345678901234567891]"));
  }

  // Layout as ECMAScript lays out a double's digits: plain for 1e-6 <= |x| < 1e21, else exponent
  // form.
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "0|0",
        "-0.000|0",
        "0e999999999999999999999|0",
        "1.0|1",
        "10e-1|1",
        "4.50|4.5",
        "1E30|1e+30",
        "2e-3|0.002",
        "12345678901234567891|12345678901234567891",
        "-12345678901234567891|-12345678901234567891",
        "123456789012345678900|123456789012345678900",
        "1234567890123456789012|1.234567890123456789012e+21",
        "0.10000000000000000001|0.10000000000000000001",
        "333333333.33333329|333333333.33333329",
        "0.0000012345678901234567|0.0000012345678901234567",
        "0.00000012345678901234567|1.2345678901234567e-7",
        "1.2345678901234567891e30|1.2345678901234567891e+30",
        "9007199254740993|9007199254740993",
        "1e-400|1e-400",
        "-2.5E-324|-2.5e-324",
        "1e-999999999|1e-999999999",
        "0.01e-999999997|1e-999999999",
        "1.7976931348623157e308|1.7976931348623157e+308",
        "1.79769313486231580793728971405303e308|1.79769313486231580793728971405303e+308",
        "0.30000000000000004|0.30000000000000004",
        "0.5e0001|5",
      })
  void numbersKeepTheirExactValue(String input, String expected) {
    assertThat(exact(input)).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({
    "1e400",
    "-1e309",
    "1.7976931348623159e308",
    "1.7976931348623158079372897140530341507994e308",
    "1e1000000000"
  })
  void numbersThatReadAsInfinityAreStillNotJson(String tooLarge) {
    assertThatThrownBy(() -> exact(tooLarge))
        .isInstanceOf(InvalidJsonException.class)
        .hasMessageContaining("too large");
  }

  @ParameterizedTest
  @CsvSource({"1e-1000000000", "0.0002e-999999999", "0.00000020000e-999999999", "0.1e-999999999"})
  void exponentsOfTenDigitsAreNotJsonHere(String tiny) {
    // Also when only the canonical form would need one: leading zeros move into the exponent, and
    // a form that cannot be read back would not be canonical (found by the fuzzer).
    assertThatThrownBy(() -> exact(tiny))
        .isInstanceOf(InvalidJsonException.class)
        .hasMessageContaining("exponent");
  }

  @Test
  void distinctBigIntegersAndLongDecimalsNeverCollide() {
    SplittableRandom random = new SplittableRandom(14);
    for (int i = 0; i < 20_000; i++) {
      BigDecimal a = randomNumber(random);
      // A close neighbour: the same digits but the last, often the same double.
      BigDecimal b =
          a.add(
              BigDecimal.ONE
                  .movePointLeft(a.scale())
                  .multiply(BigDecimal.valueOf(random.nextInt(1, 9))));
      String first = exact(a.toPlainString());
      String second = exact(b.toString());
      assertThat(first).as("%s vs %s", a, b).isNotEqualTo(second);
      assertThat(fingerprint(a.toPlainString()))
          .as("%s vs %s", a, b)
          .isNotEqualTo(fingerprint(b.toString()));
    }
  }

  @Test
  void equalValuesInAnySpellingAlwaysCollideAndTheFormDenotesTheValue() {
    SplittableRandom random = new SplittableRandom(11);
    for (int i = 0; i < 20_000; i++) {
      BigDecimal value = randomNumber(random);
      String canonical = exact(value.toPlainString());
      String respelled = respell(value, random);
      assertThat(exact(respelled)).as("%s as %s", value, respelled).isEqualTo(canonical);
      assertThat(new BigDecimal(canonical)).as(canonical).isEqualByComparingTo(value);
      assertThat(exact(canonical)).as("a fixed point").isEqualTo(canonical);
    }
  }

  @Test
  void numbersADoubleHoldsWithoutLossAreWrittenAsJcsWritesThem() {
    SplittableRandom random = new SplittableRandom(8785);
    for (int i = 0; i < 50_000; i++) {
      String token =
          (random.nextBoolean() ? "-" : "")
              + random.nextLong(1, 1_000_000_000_000_000L)
              + "e"
              + random.nextInt(-300, 290);
      assertThat(exact(token)).as(token).isEqualTo(jcs(token));
    }
  }

  /** Between 16 and 40 significant digits, as an integer or with a fraction, at any magnitude. */
  private static BigDecimal randomNumber(SplittableRandom random) {
    StringBuilder digits = new StringBuilder().append((char) ('1' + random.nextInt(9)));
    int length = random.nextInt(16, 41);
    for (int i = 1; i < length; i++) {
      digits.append((char) ('0' + random.nextInt(10)));
    }
    BigInteger unscaled = new BigInteger(digits.toString());
    int scale = random.nextBoolean() ? 0 : random.nextInt(-30, 60);
    return new BigDecimal(random.nextBoolean() ? unscaled : unscaled.negate(), scale);
  }

  /**
   * The same value: point moved, zeros added, exponent spelled with case, sign and leading zeros.
   */
  private static String respell(BigDecimal value, SplittableRandom random) {
    BigDecimal padded = value.setScale(value.scale() + random.nextInt(0, 5));
    int shift = random.nextInt(-25, 25);
    String mantissa = padded.movePointLeft(shift).toPlainString();
    if (shift == 0 && random.nextBoolean()) {
      return mantissa;
    }
    String sign = shift < 0 ? "-" : random.nextBoolean() ? "+" : "";
    return mantissa
        + (random.nextBoolean() ? "e" : "E")
        + sign
        + "0".repeat(random.nextInt(0, 3))
        + Math.abs(shift);
  }

  private static String exact(String number) {
    return new String(JsonCanonicalizer.canonicalizeExact(number.getBytes(US_ASCII)), US_ASCII);
  }

  private static String jcs(String number) {
    return new String(JsonCanonicalizer.canonicalize(number.getBytes(US_ASCII)), US_ASCII);
  }

  private static Fingerprint fingerprint(String body) {
    return Fingerprinter.defaults().json(body.getBytes(US_ASCII), "POST", "/payments");
  }
}

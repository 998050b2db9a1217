package dev.once.fingerprint;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Numbers come out exactly as ECMAScript's Number.prototype.toString prints the nearest double. */
class NumberSerialisationTest {

  // Expected values checked against Node.js: String(JSON.parse(input)).
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "0|0",
        "-0|0",
        "0.0|0",
        "-0.0|0",
        "0e5|0",
        "1|1",
        "-1|-1",
        "1.0|1",
        "1e0|1",
        "1E0|1",
        "10|10",
        "1e1|10",
        "1e2|100",
        "1e20|100000000000000000000",
        "1e21|1e+21",
        "1e+21|1e+21",
        "1e-6|0.000001",
        "1e-7|1e-7",
        "0.000001|0.000001",
        "0.0000001|1e-7",
        "123e-20|1.23e-18",
        "5e-324|5e-324",
        "4.9e-324|5e-324",
        "2.4703282292062328e-324|5e-324",
        "1e-323|1e-323",
        "1.7976931348623157e308|1.7976931348623157e+308",
        "0.30000000000000004|0.30000000000000004",
        "9007199254740993|9007199254740992",
        "9007199254740992|9007199254740992",
        "9007199254740991|9007199254740991",
        "1e23|1e+23",
        "4.35|4.35",
        "0.1|0.1",
        "-0.1|-0.1",
        "12.50|12.5",
        "100.5|100.5",
        "333333333.33333329|333333333.3333333",
        "1E30|1e+30",
        "4.50|4.5",
        "2e-3|0.002",
        "0.000000000000000000000000001|1e-27",
        "123456789012345678901|123456789012345680000",
        "123456789012345678901234|1.2345678901234569e+23",
        "1.2345678901234567|1.2345678901234567",
        "0.12345678901234567|0.12345678901234566",
        "3.141592653589793|3.141592653589793",
        "2.2250738585072014e-308|2.2250738585072014e-308",
        "2.225073858507201e-308|2.225073858507201e-308",
        "1e308|1e+308",
        "-1e308|-1e+308",
        "-1.5e-10|-1.5e-10",
        "1e-400|0",
        "-1e-400|0",
        "99999999999999999999|100000000000000000000",
        "999999999999999999999|1e+21",
        "123456789012345|123456789012345",
        "1234567890123456|1234567890123456",
        "12345678901234567|12345678901234568",
        "0.000001234|0.000001234",
        "1.0E-7|1e-7",
        "100e-2|1",
        "0.00001e5|1",
        "1000000000000000000000|1e+21",
        "5e-7|5e-7",
        "1.1e21|1.1e+21",
        "-9.87654321e-8|-9.87654321e-8",
        "295147905179352825856|295147905179352830000",
        "18446744073709551616|18446744073709552000",
        "0.1e1|1",
        "1e-5|0.00001",
        "1.25e+2|125",
        "1e-0|1",
        "-123.456e2|-12345.6",
        "1e00000000000000000000000000001|10",
        "0.00000000000000000000000000000000001e35|1",
      })
  void numbersSerialiseLikeEcmaScript(String input, String expected) {
    assertThat(canonical(input)).isEqualTo(expected);
  }

  @Test
  void extremeDoublesSerialiseLikeEcmaScript() {
    assertThat(EcmaScriptNumbers.toString(Math.pow(2, -1074))).isEqualTo("5e-324");
    assertThat(EcmaScriptNumbers.toString(3 * Double.MIN_VALUE)).isEqualTo("1.5e-323");
    assertThat(EcmaScriptNumbers.toString(0.1 + 0.2)).isEqualTo("0.30000000000000004");
    assertThat(EcmaScriptNumbers.toString(Double.MAX_VALUE)).isEqualTo("1.7976931348623157e+308");
    assertThat(EcmaScriptNumbers.toString(-Double.MIN_NORMAL))
        .isEqualTo("-2.2250738585072014e-308");
    assertThat(EcmaScriptNumbers.toString(-0.0)).isEqualTo("0");
  }

  // Java 17's Double.toString prints these with 16 or 17 digits (JDK-4511638), e.g. 2e23 as
  // 1.9999999999999998E23; ECMAScript (checked with Node.js) finds the shortest.
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "2e23|2e+23",
        "1e23|1e+23",
        "8.41e21|8.41e+21",
        "80980e17|8.098e+21",
        "92499e16|924990000000000000000",
        "28366e17|2.8366e+21",
        "46848e20|4.6848e+24",
      })
  void doublesThatJava17PrintsTooLongAreShortened(double d, String expected) {
    assertThat(new BigDecimal(Double.toString(d)).stripTrailingZeros().precision())
        .isGreaterThan(15);
    assertThat(EcmaScriptNumbers.toString(d)).isEqualTo(expected);
  }

  @Test
  void nonFiniteDoublesHaveNoJsonForm() {
    assertThatThrownBy(() -> EcmaScriptNumbers.toString(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> EcmaScriptNumbers.toString(Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void randomDoublesRoundTripWithTheFewestDigits() {
    SplittableRandom random = new SplittableRandom(8785);
    for (int i = 0; i < 100_000; i++) {
      double d = Double.longBitsToDouble(random.nextLong());
      if (!Double.isFinite(d)) {
        continue;
      }
      String s = EcmaScriptNumbers.toString(d);
      double back = Double.parseDouble(s);
      assertThat(back).as("%s reads back", s).isEqualTo(d == 0 ? 0.0 : d);
      int digits = significantDigits(s);
      assertThat(digits)
          .as("%s is no longer than Java's %s", s, d)
          .isLessThanOrEqualTo(new BigDecimal(Double.toString(d)).stripTrailingZeros().precision());
      assertThat(digits == 1 || !roundTripsWith(d, digits - 1))
          .as("%s has no shorter form", s)
          .isTrue();
    }
  }

  @Test
  void shortDecimalsTakeTheFastPathToTheSameResultAsTheExactPath() {
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < 100_000; i++) {
      long significand = random.nextLong(1, 1_000_000_000_000_000L);
      int exponent = random.nextInt(-330, 290);
      String token = (random.nextBoolean() ? "-" : "") + significand + "e" + exponent;
      double d = Double.parseDouble(token);
      assertThat(canonical(token)).as(token).isEqualTo(EcmaScriptNumbers.toString(d));
      String plain =
          new BigDecimal(significand).movePointLeft(random.nextInt(0, 20)).toPlainString();
      assertThat(canonical(plain))
          .as(plain)
          .isEqualTo(EcmaScriptNumbers.toString(Double.parseDouble(plain)));
    }
  }

  @Test
  void integersKeepTheirDigits() {
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 10_000; i++) {
      long n = random.nextLong(-(1L << 53) + 1, 1L << 53);
      assertThat(canonical(Long.toString(n))).isEqualTo(Long.toString(n));
    }
  }

  private static boolean roundTripsWith(double d, int precision) {
    BigDecimal exact = new BigDecimal(d);
    for (RoundingMode mode : new RoundingMode[] {RoundingMode.FLOOR, RoundingMode.CEILING}) {
      if (exact.round(new MathContext(precision, mode)).doubleValue() == d) {
        return true;
      }
    }
    return false;
  }

  private static int significantDigits(String ecma) {
    return new BigDecimal(ecma).stripTrailingZeros().precision();
  }

  private static String canonical(String number) {
    return new String(JsonCanonicalizer.canonicalize(number.getBytes(US_ASCII)), US_ASCII);
  }
}

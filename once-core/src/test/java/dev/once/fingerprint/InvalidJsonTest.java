package dev.once.fingerprint;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.once.Fingerprint;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Input that is not I-JSON is rejected by the canonicaliser and hashed raw by the fingerprinter.
 */
class InvalidJsonTest {

  static Stream<Arguments> malformed() {
    return Stream.of(
        bad("empty input", ""),
        bad("only whitespace", " \t\r\n "),
        bad("unterminated object", "{\"a\":1"),
        bad("unterminated array", "[1,2"),
        bad("unterminated string", "{\"a\":\"abc"),
        bad("unterminated escape", "\"abc\\"),
        bad("a hundred thousand open brackets", "[".repeat(100_000)),
        bad("nesting one level too deep", "[".repeat(513) + "]".repeat(513)),
        bad("duplicate member names", "{\"a\":1,\"a\":2}"),
        bad("duplicate member names, not adjacent", "{\"b\":1,\"a\":2,\"b\":3}"),
        bad("duplicate names spelled differently", "{\"a\":1,\"\\u0061\":2}"),
        bad("number overflowing to Infinity", "1e400"),
        bad("negative number overflowing", "[-1.8e308]"),
        bad("lone high surrogate escape", "\"\\ud800\""),
        bad("lone low surrogate escape", "\"\\udc00\""),
        bad("high surrogate escape followed by a letter", "\"\\ud800\\u0041\""),
        bad("reversed surrogate escapes", "\"\\udc00\\ud800\""),
        bytes("lone surrogate in raw UTF-8", '"', 0xED, 0xA0, 0x80, '"'),
        bytes("truncated UTF-8", '"', 0xC3, '"'),
        bytes("invalid UTF-8 byte", '"', 0xFF, '"'),
        bytes("overlong UTF-8", '"', 0xC0, 0xAF, '"'),
        bytes("UTF-8 beyond U+10FFFF", '"', 0xF4, 0x90, 0x80, 0x80, '"'),
        bytes("UTF-8 ending mid-sequence", '"', 0xE2, 0x82),
        bytes("byte order mark", 0xEF, 0xBB, 0xBF, '{', '}'),
        bytes("non-breaking space as whitespace", 0xC2, 0xA0, '1'),
        bad("raw control character in a string", "\"a\u0001b\""),
        bad("raw newline in a string", "\"a\nb\""),
        bad("raw tab in a string", "\"a\tb\""),
        bad("trailing comma in an array", "[1,]"),
        bad("trailing comma in an object", "{\"a\":1,}"),
        bad("leading zero", "01"),
        bad("leading zero in a negative", "-01"),
        bad("lone minus", "-"),
        bad("fraction without digits", "1."),
        bad("fraction without integer part", ".5"),
        bad("plus sign", "+1"),
        bad("exponent without digits", "1e"),
        bad("exponent sign without digits", "1e+"),
        bad("NaN", "NaN"),
        bad("Infinity", "Infinity"),
        bad("-Infinity", "-Infinity"),
        bad("line comment", "// note\n{}"),
        bad("block comment", "{/* note */}"),
        bad("trailing garbage", "{} x"),
        bad("two documents", "{}{}"),
        bad("extra closing bracket", "{\"a\":1}}"),
        bad("missing colon", "{\"a\" 1}"),
        bad("unquoted name", "{a:1}"),
        bad("single quotes", "'a'"),
        bad("missing comma", "[1 2]"),
        bad("truncated literal", "tru"),
        bad("capitalised literal", "True"),
        bad("invalid escape", "\"\\x\""),
        bad("short unicode escape", "\"\\u12\""),
        bad("non-hex unicode escape", "\"\\u12g4\""),
        bad("name that is not a string", "{1:2}"),
        bad("number with two exponents", "1e2e3"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void malformedInputIsRejectedWithItsOffset(String why, byte[] input) {
    assertThatThrownBy(() -> JsonCanonicalizer.canonicalize(input))
        .isInstanceOf(InvalidJsonException.class)
        .hasMessageStartingWith("invalid JSON at byte offset ")
        .satisfies(e -> assertThat(((InvalidJsonException) e).offset()).isBetween(0, input.length));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void malformedInputIsFingerprintedRaw(String why, byte[] input) {
    Fingerprinter fingerprinter = Fingerprinter.builder().exclude("/ts").build();
    Fingerprint json = fingerprinter.json(input, "POST", "/payments");
    assertThat(json).isEqualTo(fingerprinter.raw(input, "POST", "/payments"));
    assertThat(json).isEqualTo(Fingerprinter.defaults().raw(input, "POST", "/payments"));
  }

  @Test
  void theOffsetPointsAtTheProblem() {
    assertThatThrownBy(() -> JsonCanonicalizer.canonicalize("{\"a\":1,\"b\":x}".getBytes(UTF_8)))
        .hasMessage("invalid JSON at byte offset 11: expected a value, found 'x'");
    assertThatThrownBy(
            () -> JsonCanonicalizer.canonicalize("{\"b\":1,\"a\":2,\"b\":3}".getBytes(UTF_8)))
        .hasMessage("invalid JSON at byte offset 13: duplicate member name");
    assertThatThrownBy(() -> JsonCanonicalizer.canonicalize("[1,1e400]".getBytes(UTF_8)))
        .hasMessage("invalid JSON at byte offset 3: number is too large for a double");
  }

  @Test
  void aNullInputIsAnIllegalArgument() {
    assertThatThrownBy(() -> JsonCanonicalizer.canonicalize(null))
        .isInstanceOf(IllegalArgumentException.class)
        .isNotInstanceOf(InvalidJsonException.class);
  }

  private static Arguments bad(String why, String json) {
    return arguments(why, json.getBytes(UTF_8));
  }

  private static Arguments bytes(String why, int... values) {
    byte[] b = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return arguments(why, b);
  }
}

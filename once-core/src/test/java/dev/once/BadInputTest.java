package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed input to the engine's entry points: each gives its typed error before anything reaches
 * the store (a store that counts its calls sees none), so no state is left behind.
 */
class BadInputTest {

  static Stream<Arguments> malformed() {
    return Stream.of(
        bad("empty key", () -> IdempotencyKey.of(""), InvalidIdempotencyKeyException.class),
        bad("null key", () -> IdempotencyKey.of(null), InvalidIdempotencyKeyException.class),
        bad(
            "256-char key",
            () -> IdempotencyKey.of("a".repeat(256)),
            InvalidIdempotencyKeyException.class),
        bad("space in key", () -> IdempotencyKey.of("a b"), InvalidIdempotencyKeyException.class),
        bad("tab in key", () -> IdempotencyKey.of("a\tb"), InvalidIdempotencyKeyException.class),
        bad(
            "newline in key",
            () -> IdempotencyKey.of("a\nb"),
            InvalidIdempotencyKeyException.class),
        bad("NUL in key", () -> IdempotencyKey.of("a\0b"), InvalidIdempotencyKeyException.class),
        bad(
            "DEL in key",
            () -> IdempotencyKey.of("a\u007Fb"),
            InvalidIdempotencyKeyException.class),
        bad("non-ASCII key", () -> IdempotencyKey.of("café"), InvalidIdempotencyKeyException.class),
        bad("emoji key", () -> IdempotencyKey.of("key-😀"), InvalidIdempotencyKeyException.class),
        bad(
            "lone surrogate key",
            () -> IdempotencyKey.of("a\uD800"),
            InvalidIdempotencyKeyException.class),
        bad(
            "empty header",
            () -> IdempotencyKey.parseHeader(""),
            InvalidIdempotencyKeyException.class),
        bad(
            "blank header",
            () -> IdempotencyKey.parseHeader("   "),
            InvalidIdempotencyKeyException.class),
        bad(
            "empty quoted header",
            () -> IdempotencyKey.parseHeader("\"\""),
            InvalidIdempotencyKeyException.class),
        bad(
            "unterminated quote",
            () -> IdempotencyKey.parseHeader("\"abc"),
            InvalidIdempotencyKeyException.class),
        bad(
            "text after closing quote",
            () -> IdempotencyKey.parseHeader("\"abc\"def"),
            InvalidIdempotencyKeyException.class),
        bad(
            "bad escape",
            () -> IdempotencyKey.parseHeader("\"a\\nb\""),
            InvalidIdempotencyKeyException.class),
        bad(
            "escape at end",
            () -> IdempotencyKey.parseHeader("\"abc\\"),
            InvalidIdempotencyKeyException.class),
        bad(
            "control char quoted",
            () -> IdempotencyKey.parseHeader("\"a\u0001b\""),
            InvalidIdempotencyKeyException.class),
        bad(
            "non-ASCII quoted",
            () -> IdempotencyKey.parseHeader("\"é\""),
            InvalidIdempotencyKeyException.class),
        bad(
            "256 chars quoted",
            () -> IdempotencyKey.parseHeader("\"" + "a".repeat(256) + "\""),
            InvalidIdempotencyKeyException.class),
        bad(
            "huge header",
            () -> IdempotencyKey.parseHeader("\"" + "a".repeat(1_000_000) + "\""),
            InvalidIdempotencyKeyException.class),
        bad(
            "two keys in one header",
            () -> IdempotencyKey.parseHeader("abc, def"),
            InvalidIdempotencyKeyException.class),
        bad("empty scope", () -> Scope.of(""), IllegalArgumentException.class),
        bad(
            "scope with control char",
            () -> Scope.of("tenant\u0000"),
            IllegalArgumentException.class),
        bad(
            "scope with lone surrogate",
            () -> Scope.of("tenant\uDC00"),
            IllegalArgumentException.class),
        bad("scope too long", () -> Scope.of("t".repeat(513)), IllegalArgumentException.class),
        bad(
            "fingerprint version 0",
            () -> new Fingerprint(0, "aa".repeat(32)),
            IllegalArgumentException.class),
        bad(
            "fingerprint not hex",
            () -> Fingerprint.parse("1:" + "zz".repeat(32)),
            IllegalArgumentException.class),
        bad(
            "fingerprint garbage",
            () -> Fingerprint.parse("garbage"),
            IllegalArgumentException.class),
        bad(
            "negative lease",
            () -> ExecutionPolicy.builder().lease(Duration.ofSeconds(-1)),
            IllegalArgumentException.class),
        bad(
            "ttl shorter than lease",
            () ->
                ExecutionPolicy.builder()
                    .lease(Duration.ofHours(2))
                    .ttl(Duration.ofHours(1))
                    .build(),
            IllegalStateException.class),
        bad(
            "zero wait",
            () -> InFlightPolicy.waitUpTo(Duration.ZERO),
            IllegalArgumentException.class),
        bad(
            "final failure without code",
            () -> new FinalFailure("", "x"),
            IllegalArgumentException.class));
  }

  private static Arguments bad(String name, Supplier<?> input, Class<? extends Throwable> error) {
    return Arguments.of(name, input, error);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformed")
  void malformedInputGivesItsTypedErrorAndLeavesNothingBehind(
      String name, Supplier<?> input, Class<? extends Throwable> error) {
    FakeUnavailableStore store = new FakeUnavailableStore();
    try (Once once = Once.of(store)) {
      assertThatThrownBy(
              () ->
                  once.execute(
                      Scope.GLOBAL,
                      (IdempotencyKey) keyOrDefault(input),
                      new Fingerprint(1, "aa".repeat(32)),
                      ResultCodec.utf8(),
                      ctx -> "ran"))
          .isInstanceOf(error)
          .hasMessageNotContaining("Exception"); // a sentence, not a stack of class names
      assertThat(store.calls).hasValue(0);
    }
  }

  /** Evaluates the bad input where the engine would receive it: building the call's arguments. */
  private static Object keyOrDefault(Supplier<?> input) {
    Object v = input.get();
    return v instanceof IdempotencyKey k ? k : IdempotencyKey.of("unreachable");
  }
}

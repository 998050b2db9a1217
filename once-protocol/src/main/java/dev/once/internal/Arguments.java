package dev.once.internal;

import java.time.Duration;

/**
 * The argument checks of every Once builder, so that all of them reject a bad value the same way:
 * an {@link IllegalArgumentException} whose message starts with the option's name and ends with the
 * value it was given. A missing option ({@code null}) is a bad value like any other, not a {@link
 * NullPointerException}: a caller that maps configuration onto a builder, or a store asked for a
 * lease of no length, sees one exception type for every bad option. (A null that can only be a
 * programming error, such as a missing request object, stays an {@code Objects.requireNonNull}.)
 *
 * <p>Internal: shared by Once's modules, not part of its API.
 */
public final class Arguments {

  private Arguments() {}

  /** {@code value}, if it is longer than zero. */
  public static Duration positive(String option, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(option + " must be positive, was " + value);
    }
    return value;
  }

  /** {@code value}, if it is zero or longer. */
  public static Duration notNegative(String option, Duration value) {
    if (value == null || value.isNegative()) {
      throw new IllegalArgumentException(option + " must be zero or positive, was " + value);
    }
    return value;
  }

  /** {@code value}, if it has a character other than white space. */
  public static String notBlank(String option, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(option + " must not be blank, was " + value);
    }
    return value;
  }

  /** {@code value}, if it is longer than zero and at most {@code max}. */
  public static Duration positive(String option, Duration value, Duration max) {
    if (value == null || value.isNegative() || value.isZero() || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          option + " must be positive and at most " + max + ", was " + value);
    }
    return value;
  }

  /** {@code value}, if it is at least {@code min} and at most {@code max}. */
  public static Duration between(String option, Duration value, Duration min, Duration max) {
    if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          option + " must be between " + min + " and " + max + ", was " + value);
    }
    return value;
  }

  /** {@code value}, if it is at least {@code min} and at most {@code max}. */
  public static int between(String option, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          option + " must be between " + min + " and " + max + ", was " + value);
    }
    return value;
  }

  /** {@code value}, if it is not null. */
  public static <T> T present(String option, T value) {
    if (value == null) {
      throw new IllegalArgumentException(option + " must be set, was null");
    }
    return value;
  }
}

package dev.once.fingerprint;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Formats doubles exactly as ECMAScript's {@code Number.prototype.toString} does, which RFC 8785
 * §3.2.2.3 requires: the fewest significant digits that read back as the same double, laid out in
 * plain or exponent form by the size of the decimal exponent.
 *
 * <p>{@link Double#toString(double)} cannot be used: before JDK 19 it sometimes gives one digit too
 * many (JDK-4511638), and its layout differs anyway. This class is the exact but slow path; the
 * parser handles the common short numbers without it (see {@link NumberCanonicalizer}).
 */
final class EcmaScriptNumbers {

  /** Below 2^53 every integer is a double, so its shortest digits are its own. */
  private static final double EXACT_INTEGER_LIMIT = 0x1p53;

  private EcmaScriptNumbers() {}

  /** Returns the ECMAScript string of a finite double. */
  static String toString(double d) {
    ByteSink sink = new ByteSink(64);
    write(d, sink);
    return new String(sink.buf, 0, sink.len, StandardCharsets.US_ASCII);
  }

  /** Appends the ECMAScript string of a finite double; the sink must have 64 bytes free. */
  static void write(double d, ByteSink out) {
    if (!Double.isFinite(d)) {
      throw new IllegalArgumentException("no JSON form for " + d);
    }
    if (d == 0) {
      out.write((byte) '0');
      return;
    }
    double abs = Math.abs(d);
    BigDecimal digits =
        abs < EXACT_INTEGER_LIMIT && abs == Math.rint(abs)
            ? BigDecimal.valueOf((long) abs).stripTrailingZeros()
            : shortest(abs);
    byte[] ascii = digits.unscaledValue().toString().getBytes(StandardCharsets.US_ASCII);
    layout(d < 0, ascii, 0, ascii.length, ascii.length - digits.scale(), out);
  }

  /**
   * Returns the decimal with the fewest significant digits that reads back as {@code d} (positive,
   * finite), the one closest to {@code d} among those, and the even one of a tie.
   *
   * <p>If p digits round-trip then p+1 do too (the p-digit decimal is also a (p+1)-digit one, and
   * the (p+1)-digit candidate on its side of d is at least as close), so the search starts from the
   * length {@link Double#toString} found, which always round-trips, and walks down.
   */
  static BigDecimal shortest(double d) {
    BigDecimal exact = new BigDecimal(d);
    int p = new BigDecimal(Double.toString(d)).stripTrailingZeros().precision();
    BigDecimal best = candidate(exact, p, d);
    while (best == null && p < 17) {
      best = candidate(exact, ++p, d);
    }
    if (best == null) {
      throw new AssertionError("17 significant digits always read back as " + d);
    }
    for (int q = p - 1; q >= 1; q--) {
      BigDecimal shorter = candidate(exact, q, d);
      if (shorter == null) {
        break;
      }
      best = shorter;
    }
    return best.stripTrailingZeros();
  }

  /**
   * Returns the p-digit decimal next to {@code exact} that reads back as d, or null if none does.
   */
  private static @Nullable BigDecimal candidate(BigDecimal exact, int p, double d) {
    BigDecimal below = exact.round(new MathContext(p, RoundingMode.FLOOR));
    BigDecimal above = exact.round(new MathContext(p, RoundingMode.CEILING));
    boolean belowOk = below.doubleValue() == d;
    boolean aboveOk = above.doubleValue() == d;
    if (belowOk && aboveOk) {
      int cmp = exact.subtract(below).compareTo(above.subtract(exact));
      if (cmp != 0) {
        return cmp < 0 ? below : above;
      }
      return below.unscaledValue().testBit(0) ? above : below;
    }
    return belowOk ? below : aboveOk ? above : null;
  }

  /**
   * Lays out k significant digits {@code digits[from, from+k)} with decimal point position n (the
   * value is 0.d1d2…dk × 10^n), following ECMAScript Number::toString steps 6 to 10. The exact
   * numbers of fingerprints use it too, with any k and far larger n than a double has: the layout
   * is a function of (digits, n) alone, so it never maps two values to one string.
   */
  static void layout(boolean negative, byte[] digits, int from, int k, long n, ByteSink out) {
    if (negative) {
      out.write((byte) '-');
    }
    if (k <= n && n <= 21) {
      out.write(digits, from, k);
      zeros((int) n - k, out);
    } else if (0 < n && n <= 21) {
      out.write(digits, from, (int) n);
      out.write((byte) '.');
      out.write(digits, from + (int) n, k - (int) n);
    } else if (-6 < n && n <= 0) {
      out.write((byte) '0');
      out.write((byte) '.');
      zeros((int) -n, out);
      out.write(digits, from, k);
    } else {
      out.write(digits[from]);
      if (k > 1) {
        out.write((byte) '.');
        out.write(digits, from + 1, k - 1);
      }
      exponent(n - 1, out);
    }
  }

  private static void zeros(int count, ByteSink out) {
    for (int i = 0; i < count; i++) {
      out.write((byte) '0');
    }
  }

  /** Writes {@code e±d…}; |e| stays far below Long.MAX_VALUE (see NumberCanonicalizer). */
  private static void exponent(long e, ByteSink out) {
    out.write((byte) 'e');
    out.write((byte) (e < 0 ? '-' : '+'));
    long abs = Math.abs(e);
    long scale = 1;
    while (scale <= abs / 10) { // at most 18 rounds
      scale *= 10;
    }
    for (; scale > 0; scale /= 10) {
      out.write((byte) ('0' + abs / scale % 10));
    }
  }
}

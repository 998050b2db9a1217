package dev.once.fingerprint;

import java.nio.charset.StandardCharsets;

/**
 * Reads one JSON number and writes its RFC 8785 form, which is ECMAScript's form of the nearest
 * double.
 *
 * <p>Three paths, cheapest first. Every decimal of at most 15 significant digits reads back from its
 * double unchanged (DBL_DIG is 15), so no shorter decimal names the same double: for such a token
 * the canonical digits are the token's own. (1) A token without exponent and in ECMAScript's plain
 * range ({@code 12.50}, {@code -3}, {@code 0.000125}) is then already canonical but for trailing
 * fraction zeros, so it is copied without them. (2) Other such tokens ({@code 1E30}, {@code 2e-3},
 * {@code 0.0000001}) get their digits laid out by {@link EcmaScriptNumbers#layout}. (3) Anything
 * longer is parsed to a double and formatted by {@link EcmaScriptNumbers}, exactly and slowly.
 */
final class NumberCanonicalizer {

  /** Room the caller must leave in the sink: the longest output plus the digit scratch area. */
  static final int HEADROOM = 64;

  private static final int MAX_EXACT_DIGITS = 15;
  /** Keeps the short path in the range of normal doubles, far from overflow and underflow. */
  private static final int MAX_SHORT_EXPONENT = 290;
  private static final int SCRATCH = 32;
  private static final long[] POW10 = new long[MAX_EXACT_DIGITS + 1];

  static {
    POW10[0] = 1;
    for (int i = 1; i < POW10.length; i++) {
      POW10[i] = POW10[i - 1] * 10;
    }
  }

  private NumberCanonicalizer() {}

  /**
   * Canonicalises the number starting at {@code start} into {@code out} and returns the offset just
   * after it. What follows the number is the caller's to check.
   */
  static int canonicalize(byte[] in, int start, int end, ByteSink out) {
    int after = copyIfPlain(in, start, end, out);
    return after >= 0 ? after : canonicalizeOther(in, start, end, out);
  }

  /**
   * The first path, small enough to be inlined into the parser, for the numbers APIs send: a token
   * without exponent, with at most 15 significant digits, at most 21 integer digits, and, if below
   * 1, fewer than 6 zeros after the point. Its canonical form is the token itself without the
   * fraction's trailing zeros (and without a point left bare); zero is {@code 0}. Copies that and
   * returns the offset after the token, or returns -1 for any other token.
   */
  static int copyIfPlain(byte[] in, int start, int end, ByteSink out) {
    int intStart = in[start] == '-' ? start + 1 : start;
    int intEnd = digits(in, intStart, end);
    int intLength = intEnd - intStart;
    if (intLength == 0 || (intLength > 1 && in[intStart] == '0')) {
      return -1; // malformed: the exact path explains
    }
    int fracEnd = intEnd;
    int kept = intEnd; // where the output ends: the fraction without trailing zeros, or no point
    if (intEnd < end && in[intEnd] == '.') {
      fracEnd = digits(in, intEnd + 1, end);
      kept = fracEnd;
      while (in[kept - 1] == '0') {
        kept--;
      }
      kept = kept == intEnd + 1 ? intEnd : kept;
    }
    if (fracEnd == intEnd + 1 || (fracEnd < end && (in[fracEnd] | 0x20) == 'e')) {
      return -1;
    }
    boolean plain = in[intStart] == '0'
        ? kept == intEnd || plainBelowOne(in, intEnd + 1, kept)
        : plainFromOne(intLength, kept > intEnd ? kept - intEnd - 1 : -trailingZeros(in, intStart, intEnd));
    if (!plain) {
      return -1;
    }
    if (in[intStart] == '0' && kept == intEnd) {
      out.write((byte) '0'); // zero, however spelled: 0, -0, 0.000
    } else {
      out.write(in, start, kept - start);
    }
    return fracEnd;
  }

  /** For 0.f: ECMAScript writes it plainly if it has fewer than 6 zeros after the point. */
  private static boolean plainBelowOne(byte[] in, int fracStart, int kept) {
    int first = fracStart;
    while (in[first] == '0') {
      first++;
    }
    return first - fracStart < 6 && kept - first <= MAX_EXACT_DIGITS;
  }

  /**
   * For an integer part of {@code intLength} digits, not starting with 0, and a fraction of
   * {@code fraction} significant digits — or, when negative, an integer with that many trailing zeros.
   */
  private static boolean plainFromOne(int intLength, int fraction) {
    return fraction >= 0
        ? intLength + fraction <= MAX_EXACT_DIGITS
        : intLength <= 21 && intLength + fraction <= MAX_EXACT_DIGITS;
  }

  private static int trailingZeros(byte[] in, int from, int to) {
    int p = to;
    while (p > from && in[p - 1] == '0') {
      p--;
    }
    return to - p;
  }

  /** The second and third paths, for any token the first path declined. */
  static int canonicalizeOther(byte[] in, int start, int end, ByteSink out) {
    boolean negative = in[start] == '-';
    int intStart = negative ? start + 1 : start;
    int intEnd = digits(in, intStart, end);
    if (intEnd == intStart) {
      throw new InvalidJsonException("a number needs a digit here", intStart);
    }
    if (in[intStart] == '0' && intEnd - intStart > 1) {
      throw new InvalidJsonException("a number must not have a leading zero", intStart);
    }
    int fracEnd = intEnd;
    if (intEnd < end && in[intEnd] == '.') {
      fracEnd = requireDigits(in, intEnd + 1, end, "a fraction needs a digit after '.'");
    }
    int expEnd = fracEnd;
    if (fracEnd < end && (in[fracEnd] | 0x20) == 'e') {
      int signEnd = fracEnd + 1 < end && (in[fracEnd + 1] == '+' || in[fracEnd + 1] == '-') ? fracEnd + 2 : fracEnd + 1;
      expEnd = requireDigits(in, signEnd, end, "an exponent needs a digit");
    }
    if (!writeShort(in, negative, intStart, intEnd, fracEnd, expEnd, out)) {
      writeParsed(in, start, expEnd, out);
    }
    return expEnd;
  }

  private static int digits(byte[] in, int p, int end) {
    while (p < end && in[p] >= '0' && in[p] <= '9') {
      p++;
    }
    return p;
  }

  private static int requireDigits(byte[] in, int p, int end, String reason) {
    int after = digits(in, p, end);
    if (after == p) {
      throw new InvalidJsonException(reason, p);
    }
    return after;
  }

  /** The middle path; returns false when the number needs the exact one. */
  private static boolean writeShort(
      byte[] in, boolean negative, int intStart, int intEnd, int fracEnd, int expEnd, ByteSink out) {
    long significand = 0;
    int k = 0;
    int pendingZeros = 0;
    int firstSignificant = -1;
    int index = 0;
    for (int p = intStart; p < fracEnd; p++) {
      if (p == intEnd) {
        continue;
      }
      int digit = in[p] - '0';
      if (digit == 0) {
        pendingZeros += k > 0 ? 1 : 0;
      } else {
        if (k == 0) {
          firstSignificant = index;
        }
        k += pendingZeros + 1;
        if (k > MAX_EXACT_DIGITS) {
          return false;
        }
        significand = significand * POW10[pendingZeros + 1] + digit;
        pendingZeros = 0;
      }
      index++;
    }
    if (k == 0) {
      out.write((byte) '0');
      return true;
    }
    long n = (long) (intEnd - intStart) - firstSignificant + exponent(in, fracEnd, expEnd);
    if (n < -MAX_SHORT_EXPONENT || n > MAX_SHORT_EXPONENT) {
      return false;
    }
    int from = out.len + SCRATCH;
    for (int i = from + k - 1; i >= from; i--) {
      out.buf[i] = (byte) ('0' + significand % 10);
      significand /= 10;
    }
    EcmaScriptNumbers.layout(negative, out.buf, from, k, (int) n, out);
    return true;
  }

  /** Reads the exponent, saturating far beyond any double's so that long exponents cannot wrap. */
  private static long exponent(byte[] in, int fracEnd, int expEnd) {
    if (fracEnd == expEnd) {
      return 0;
    }
    int p = fracEnd + 1;
    boolean negative = in[p] == '-';
    if (in[p] == '+' || in[p] == '-') {
      p++;
    }
    long e = 0;
    for (; p < expEnd; p++) {
      e = Math.min(e * 10 + (in[p] - '0'), 1_000_000);
    }
    return negative ? -e : e;
  }

  private static void writeParsed(byte[] in, int start, int end, ByteSink out) {
    double d = Double.parseDouble(new String(in, start, end - start, StandardCharsets.ISO_8859_1));
    if (Double.isInfinite(d)) {
      throw new InvalidJsonException("number is too large for a double", start);
    }
    EcmaScriptNumbers.write(d, out);
  }
}

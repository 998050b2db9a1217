package dev.once.fingerprint;

import java.nio.charset.StandardCharsets;

/**
 * Reads one JSON number and writes its canonical form, in one of two modes.
 *
 * <p><b>JCS</b> (RFC 8785): ECMAScript's form of the nearest double. Three paths, cheapest first.
 * Every decimal of at most 15 significant digits reads back from its double unchanged (DBL_DIG is
 * 15), so no shorter decimal names the same double: for such a token the canonical digits are the
 * token's own. (1) A token without exponent and in ECMAScript's plain range ({@code 12.50}, {@code
 * -3}, {@code 0.000125}) is then already canonical but for trailing fraction zeros, so it is copied
 * without them. (2) Other such tokens ({@code 1E30}, {@code 2e-3}, {@code 0.0000001}) get their
 * digits laid out by {@link EcmaScriptNumbers#layout}. (3) Anything longer is parsed to a double
 * and formatted by {@link EcmaScriptNumbers}, exactly and slowly.
 *
 * <p><b>Exact</b> (fingerprints): the token's own value, never rounded. Its significant digits,
 * without leading and trailing zeros, and the position of the decimal point they imply are laid out
 * by the same ECMAScript rules. That is one string per value ({@code 1}, {@code 1.0}, {@code 10e-1}
 * → {@code 1}) and one value per string, so two different numbers never meet. It needs no
 * arithmetic at all, and it is the JCS form whenever JCS loses nothing: by the argument above,
 * whenever the token has at most 15 significant digits in the range of normal doubles. Path (1)
 * therefore serves both modes; only longer or extreme tokens tell them apart.
 */
final class NumberCanonicalizer {

  /** Room the caller must leave in the sink: the longest output plus the digit scratch area. */
  static final int HEADROOM = 64;

  private static final int MAX_EXACT_DIGITS = 15;

  /** Keeps the short path in the range of normal doubles, far from overflow and underflow. */
  private static final int MAX_SHORT_EXPONENT = 290;

  private static final int SCRATCH = 32;

  /**
   * A number whose point position n (value 0.d… × 10^n) is above this is too large for a double.
   */
  private static final int MAX_DOUBLE_EXPONENT = 309;

  /** Exponents are read up to this; the exact form refuses a nonzero number with a larger one. */
  private static final long EXPONENT_LIMIT = 1_000_000_000;

  private static final long[] POW10 = new long[MAX_EXACT_DIGITS + 1];

  static {
    POW10[0] = 1;
    for (int i = 1; i < POW10.length; i++) {
      POW10[i] = POW10[i - 1] * 10;
    }
  }

  private NumberCanonicalizer() {}

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
    boolean plain =
        in[intStart] == '0'
            ? kept == intEnd || plainBelowOne(in, intEnd + 1, kept)
            : plainFromOne(
                intLength,
                kept > intEnd ? kept - intEnd - 1 : -trailingZeros(in, intStart, intEnd));
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
   * For an integer part of {@code intLength} digits, not starting with 0, and a fraction of {@code
   * fraction} significant digits — or, when negative, an integer with that many trailing zeros.
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

  /**
   * For any token the first path declined: in JCS mode the second and third paths, returning the
   * offset after the token; in exact mode the exact form, returning the offset after the token, or
   * its complement ({@code ~offset}) when JCS could have written the number differently, which
   * tells the caller that the two modes' output may differ for this input.
   */
  static int canonicalizeOther(byte[] in, int start, int end, ByteSink out, boolean exact) {
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
      int signEnd =
          fracEnd + 1 < end && (in[fracEnd + 1] == '+' || in[fracEnd + 1] == '-')
              ? fracEnd + 2
              : fracEnd + 1;
      expEnd = requireDigits(in, signEnd, end, "an exponent needs a digit");
    }
    if (exact) {
      return writeExact(in, start, negative, intStart, intEnd, fracEnd, expEnd, out);
    }
    if (!writeShort(in, negative, intStart, intEnd, fracEnd, expEnd, out)) {
      writeParsed(in, start, expEnd, out);
    }
    return expEnd;
  }

  /** The exact form; see the class comment. Returns as {@link #canonicalizeOther} says. */
  private static int writeExact(
      byte[] in,
      int start,
      boolean negative,
      int intStart,
      int intEnd,
      int fracEnd,
      int expEnd,
      ByteSink out) {
    int first =
        intStart; // the first significant digit; intEnd is the point, when there is a fraction
    while (first < fracEnd && (in[first] == '0' || first == intEnd)) {
      first++;
    }
    if (first == fracEnd) {
      out.write((byte) '0'); // zero, however spelled: 0, -0.00, 0e999999999999999999999
      return expEnd;
    }
    int last = fracEnd - 1;
    while (in[last] == '0' || last == intEnd) {
      last--;
    }
    // The value is 0.d(first)…d(last) × 10^n.
    long exponent = exponent(in, fracEnd, expEnd);
    if (Math.abs(exponent) >= EXPONENT_LIMIT) {
      // Too large for a double one way; the other, JCS reads it as zero, and an exact form would
      // need arithmetic on exponents of any length for numbers no one sends.
      throw new InvalidJsonException(
          exponent > 0
              ? "number is too large for a double"
              : "an exponent below -" + (EXPONENT_LIMIT - 1) + " is not supported",
          start);
    }
    long n = (first < intEnd ? intEnd - first : intEnd + 1 - first) + exponent;
    if (n - 1 <= -EXPONENT_LIMIT) {
      // The form written is d.ddd×10^(n-1): an exponent the input kept in range may leave it once
      // leading zeros move into it (0.0002e-999999999), and the output must read back the same.
      throw new InvalidJsonException(
          "an exponent below -" + (EXPONENT_LIMIT - 1) + " is not supported", start);
    }
    if (n > MAX_DOUBLE_EXPONENT
        || (n == MAX_DOUBLE_EXPONENT && Double.isInfinite(parse(in, start, expEnd)))) {
      throw new InvalidJsonException("number is too large for a double", start);
    }
    // Gather the digits past the output's end, where the layout, which writes at most 8 bytes
    // before its first digit, reads each digit before it writes over it.
    out.ensure(out.len + SCRATCH + (last - first + 1));
    int from = out.len + SCRATCH;
    int k = 0;
    for (int p = first; p <= last; p++) {
      if (p != intEnd) {
        out.buf[from + k++] = in[p];
      }
    }
    EcmaScriptNumbers.layout(negative, out.buf, from, k, n, out);
    boolean sameAsJcs =
        k <= MAX_EXACT_DIGITS && -MAX_SHORT_EXPONENT <= n && n <= MAX_SHORT_EXPONENT;
    return sameAsJcs ? expEnd : ~expEnd;
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
      byte[] in,
      boolean negative,
      int intStart,
      int intEnd,
      int fracEnd,
      int expEnd,
      ByteSink out) {
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
    EcmaScriptNumbers.layout(negative, out.buf, from, k, n, out);
    return true;
  }

  /**
   * Reads the exponent, saturating at {@link #EXPONENT_LIMIT}, far beyond any double's, so that
   * long exponents cannot wrap.
   */
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
      e = Math.min(e * 10 + (in[p] - '0'), EXPONENT_LIMIT);
    }
    return negative ? -e : e;
  }

  private static double parse(byte[] in, int start, int end) {
    return Double.parseDouble(new String(in, start, end - start, StandardCharsets.ISO_8859_1));
  }

  private static void writeParsed(byte[] in, int start, int end, ByteSink out) {
    double d = parse(in, start, end);
    if (Double.isInfinite(d)) {
      throw new InvalidJsonException("number is too large for a double", start);
    }
    EcmaScriptNumbers.write(d, out);
  }
}

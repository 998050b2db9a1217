package dev.once.fingerprint;

/**
 * The slow parts of reading a JSON string, kept apart from the parser's plain-ASCII loop: escape
 * sequences, multi-byte UTF-8 validation, and decoding a canonical string back to its bytes.
 */
final class JsonStrings {

  private static final byte[] HEX = {
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'
  };

  /** The control characters RFC 8785 escapes with a letter, and those letters. */
  private static final byte[] CONTROLS = {'\b', '\t', '\n', '\f', '\r'};

  private static final byte[] LETTERS = {'b', 't', 'n', 'f', 'r'};
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGH_BITS = 0x8080808080808080L;

  /**
   * Copies the run of plain bytes at {@code p} — printable ASCII other than {@code "} and {@code
   * \}, which RFC 8785 writes as they are — to {@code dst[o…]} and returns where the run stops: at
   * a quote, a backslash, a control character, a non-ASCII byte, or {@code end}.
   *
   * <p>Eight bytes at a time: each word is tested for the stop bytes with the classic has-zero-byte
   * trick, whose borrows can only mark bytes above the first real match, so the lowest marked byte
   * is exact. Whole words are stored, so up to 7 bytes past the run may be written; the caller's
   * buffer must have {@code end - p} bytes of room after {@code o}.
   */
  static int copyPlain(byte[] src, int p, int end, byte[] dst, int o) {
    int start = p;
    while (p + 8 <= end) {
      long word = Words.get(src, p);
      Words.set(dst, o + (p - start), word);
      long stops = stopBytes(word);
      if (stops != 0) {
        return p + (Long.numberOfTrailingZeros(stops) >>> 3);
      }
      p += 8;
    }
    while (p < end) {
      byte b = src[p];
      if (b < 0x20 || b == '"' || b == '\\') {
        break;
      }
      dst[o + (p - start)] = b;
      p++;
    }
    return p;
  }

  /**
   * Marks, with its high bit, each byte of a little-endian word that ends a plain run: a quote, a
   * backslash, a control character or a non-ASCII byte. Only the lowest mark is exact.
   */
  static long stopBytes(long word) {
    long quote = word ^ 0x2222222222222222L;
    long backslash = word ^ 0x5C5C5C5C5C5C5C5CL;
    long stops =
        ((quote - ONES) & ~quote)
            | ((backslash - ONES) & ~backslash)
            | (word - 0x2020202020202020L)
            | word;
    return stops & HIGH_BITS;
  }

  /** Returns whether {@code buf[from, to)} holds a backslash. */
  static boolean hasBackslash(byte[] buf, int from, int to) {
    for (int i = from; i < to; i++) {
      if (buf[i] == '\\') {
        return true;
      }
    }
    return false;
  }

  private JsonStrings() {}

  /**
   * Reads the escape sequence at {@code p} (a backslash), writes its canonical form and returns the
   * offset after it. A {@code \}{@code u} escape of a high surrogate must be followed by one of a
   * low surrogate; RFC 8785 §3.2.2.2 requires rejecting lone ones.
   */
  static int escape(byte[] in, int p, int end, ByteSink out) {
    if (p + 1 >= end) {
      throw new InvalidJsonException("unterminated string", p);
    }
    byte e = in[p + 1];
    switch (e) {
      case '"', '\\', 'b', 'f', 'n', 'r', 't' -> {
        out.write((byte) '\\');
        out.write(e);
      }
      case '/' -> out.write((byte) '/');
      case 'u' -> {
        return unicodeEscape(in, p, end, out);
      }
      default -> throw new InvalidJsonException("invalid escape sequence", p);
    }
    return p + 2;
  }

  private static int unicodeEscape(byte[] in, int p, int end, ByteSink out) {
    int unit = hex4(in, p + 2, end);
    int next = p + 6;
    int codePoint = unit;
    if (Character.isHighSurrogate((char) unit)) {
      int low =
          next + 6 <= end && in[next] == '\\' && in[next + 1] == 'u' ? hex4(in, next + 2, end) : -1;
      if (low < 0 || !Character.isLowSurrogate((char) low)) {
        throw new InvalidJsonException("lone surrogate in a \\u escape", p);
      }
      codePoint = Character.toCodePoint((char) unit, (char) low);
      next += 6;
    } else if (Character.isLowSurrogate((char) unit)) {
      throw new InvalidJsonException("lone surrogate in a \\u escape", p);
    }
    writeCodePoint(codePoint, out);
    return next;
  }

  private static int hex4(byte[] in, int p, int end) {
    if (p + 4 > end) {
      throw new InvalidJsonException("unterminated \\u escape", p);
    }
    int value = 0;
    for (int i = p; i < p + 4; i++) {
      int digit = Character.digit(in[i], 16);
      if (digit < 0) {
        throw new InvalidJsonException("a \\u escape needs four hex digits", i);
      }
      value = value << 4 | digit;
    }
    return value;
  }

  /** Writes a code point as RFC 8785 wants it: short escapes, {@code \}{@code u00xx}, or UTF-8. */
  static void writeCodePoint(int cp, ByteSink out) {
    if (cp < 0x20) {
      writeControl(cp, out);
    } else if (cp == '"' || cp == '\\') {
      out.write((byte) '\\');
      out.write((byte) cp);
    } else {
      writeUtf8(cp, out);
    }
  }

  /** Writes a code point as UTF-8; a surrogate code point gets the generalised three-byte form. */
  static void writeUtf8(int cp, ByteSink out) {
    if (cp < 0x80) {
      out.write((byte) cp);
    } else if (cp < 0x800) {
      out.write((byte) (0xC0 | cp >> 6));
      out.write((byte) (0x80 | cp & 0x3F));
    } else if (cp < 0x10000) {
      out.write((byte) (0xE0 | cp >> 12));
      out.write((byte) (0x80 | cp >> 6 & 0x3F));
      out.write((byte) (0x80 | cp & 0x3F));
    } else {
      out.write((byte) (0xF0 | cp >> 18));
      out.write((byte) (0x80 | cp >> 12 & 0x3F));
      out.write((byte) (0x80 | cp >> 6 & 0x3F));
      out.write((byte) (0x80 | cp & 0x3F));
    }
  }

  private static void writeControl(int cp, ByteSink out) {
    out.write((byte) '\\');
    int shortForm = indexOf(CONTROLS, cp);
    if (shortForm >= 0) {
      out.write(LETTERS[shortForm]);
    } else {
      out.write((byte) 'u');
      out.write((byte) '0');
      out.write((byte) '0');
      out.write(HEX[cp >> 4]);
      out.write(HEX[cp & 0xF]);
    }
  }

  private static int indexOf(byte[] bytes, int value) {
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == value) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Returns the length of the well-formed UTF-8 sequence at {@code p}, whose lead byte is not
   * ASCII, per Unicode table 3-7: no overlong forms, no surrogates (ED A0–BF), nothing past
   * U+10FFFF.
   */
  static int utf8Length(byte[] in, int p, int end) {
    int lead = in[p] & 0xFF;
    if (lead < 0xC2 || lead > 0xF4) {
      throw new InvalidJsonException("invalid UTF-8", p);
    }
    int length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (p + length > end) {
      throw new InvalidJsonException("truncated UTF-8 sequence", p);
    }
    int second = in[p + 1] & 0xFF;
    int min = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
    int max = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
    if (lead == 0xED && second >= 0xA0 && second <= 0xBF) {
      throw new InvalidJsonException("lone surrogate encoded in UTF-8", p);
    }
    if (second < min || second > max) {
      throw new InvalidJsonException("invalid UTF-8", p);
    }
    for (int i = p + 2; i < p + length; i++) {
      if ((in[i] & 0xC0) != 0x80) {
        throw new InvalidJsonException("invalid UTF-8", i);
      }
    }
    return length;
  }

  /**
   * Decodes the canonical string content {@code buf[from, to)} (which {@link #escape} wrote, so
   * only the escapes {@code \" \\ \b \f \n \r \t \}{@code u00xx} can occur) into its UTF-8 bytes.
   */
  static void unescapeCanonical(byte[] buf, int from, int to, ByteSink out) {
    for (int i = from; i < to; i++) {
      byte b = buf[i];
      if (b != '\\') {
        out.write(b);
        continue;
      }
      byte e = buf[++i];
      if (e == 'u') {
        out.write((byte) (Character.digit(buf[i + 3], 16) << 4 | Character.digit(buf[i + 4], 16)));
        i += 4;
      } else {
        int shortForm = indexOf(LETTERS, e);
        out.write(shortForm >= 0 ? CONTROLS[shortForm] : e); // else \" or \\
      }
    }
  }
}

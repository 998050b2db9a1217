package dev.once.fingerprint;

/**
 * Compares UTF-8 encoded names in the order of their UTF-16 code units, which RFC 8785 §3.2.3
 * requires for member names, without decoding them.
 *
 * <p>UTF-8 byte order is code point order. UTF-16 order differs from it in one place only: a
 * supplementary character (four UTF-8 bytes, lead byte F0–F4, a surrogate pair D800–DFFF in UTF-16)
 * sorts before U+E000–U+FFFF (lead bytes EE and EF). So the bytes are compared as they are, except
 * at a first difference between those two groups of lead bytes, where the order flips.
 */
final class Utf16Order {

  private Utf16Order() {}

  static int compare(byte[] a, int aStart, int aLength, byte[] b, int bStart, int bLength) {
    int n = Math.min(aLength, bLength);
    for (int i = 0; i < n; i++) {
      int x = a[aStart + i] & 0xFF;
      int y = b[bStart + i] & 0xFF;
      if (x != y) {
        // Continuation bytes (80-BF) are below EE, so this only fires on differing lead bytes.
        if (x >= 0xEE && y >= 0xEE && (x >= 0xF0) != (y >= 0xF0)) {
          return y - x;
        }
        return x - y;
      }
    }
    return aLength - bLength;
  }

  /**
   * Packs a name's first 8 bytes big-endian, zero-padded, with the lead bytes F0–F4 and EE–EF
   * swapped in order, so that whenever two prefixes differ, their unsigned order is the order
   * {@link #compare} gives the names. Equal prefixes decide nothing unless both names are at most 8
   * bytes long, in which case the shorter one comes first.
   *
   * <p>{@code readableWord} says whether 8 bytes can be read at {@code start} even if the name is
   * shorter; then an ASCII prefix costs one load.
   */
  static long prefix(byte[] buf, int start, int length, boolean readableWord) {
    int n = Math.min(length, Long.BYTES);
    if (readableWord) {
      long word = Long.reverseBytes(Words.get(buf, start));
      long packed = n == Long.BYTES ? word : word & ~(-1L >>> (8 * n));
      if ((packed & 0x8080808080808080L) == 0) {
        return packed;
      }
    }
    long packed = 0;
    for (int i = 0; i < n; i++) {
      int b = buf[start + i] & 0xFF;
      int ordered = b < 0xEE ? b : b >= 0xF0 ? b - 2 : b + 5;
      packed |= (long) ordered << (56 - 8 * i);
    }
    return packed;
  }
}

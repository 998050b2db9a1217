package dev.once.fingerprint;

/**
 * Compares UTF-8 encoded names in the order of their UTF-16 code units, which RFC 8785 §3.2.3
 * requires for member names, without decoding them.
 *
 * <p>UTF-8 byte order is code point order. UTF-16 order differs from it in one place only: a
 * supplementary character (four UTF-8 bytes, lead byte F0–F4, a surrogate pair D800–DFFF in
 * UTF-16) sorts before U+E000–U+FFFF (lead bytes EE and EF). So the bytes are compared as they are,
 * except at a first difference between those two groups of lead bytes, where the order flips.
 */
final class Utf16Order {

  private Utf16Order() {}

  static int compare(byte[] buf, int aStart, int aLength, int bStart, int bLength) {
    int n = Math.min(aLength, bLength);
    for (int i = 0; i < n; i++) {
      int x = buf[aStart + i] & 0xFF;
      int y = buf[bStart + i] & 0xFF;
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
}

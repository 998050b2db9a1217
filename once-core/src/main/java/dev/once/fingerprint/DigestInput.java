package dev.once.fingerprint;

import org.jspecify.annotations.Nullable;

/**
 * Writes string lists into digest input so that different lists never give the same bytes: a 4-byte
 * big-endian count, then each string's 4-byte big-endian length and its UTF-8 bytes.
 *
 * <p>Strings are encoded by hand because {@link String#getBytes} replaces a lone surrogate with
 * {@code ?}, which would make {@code "\uD800"} and {@code "?"} collide; here a lone surrogate gets
 * the generalised three-byte form instead.
 */
final class DigestInput {

  private DigestInput() {}

  static void writeParts(String[] parts, ByteSink out) {
    out.ensure(out.len + 4);
    writeInt(parts.length, out);
    for (int i = 0; i < parts.length; i++) {
      if (parts[i] == null) {
        throw new IllegalArgumentException("context part " + i + " is null");
      }
      writePart(parts[i], out);
    }
  }

  /**
   * Writes one optional string: like a part, or, when absent (null), the length {@code 0xFFFFFFFF},
   * which no part has, so that absent differs from every string, the empty one included.
   */
  static void writeOptional(@Nullable String part, ByteSink out) {
    if (part == null) {
      out.ensure(out.len + 4);
      writeInt(-1, out);
    } else {
      writePart(part, out);
    }
  }

  private static void writePart(String part, ByteSink out) {
    out.ensure(out.len + 4 + 3 * part.length());
    int lengthAt = out.len;
    out.len += 4;
    for (int i = 0; i < part.length(); i++) {
      char c = part.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < part.length()
          && Character.isLowSurrogate(part.charAt(i + 1))) {
        JsonStrings.writeUtf8(Character.toCodePoint(c, part.charAt(++i)), out);
      } else {
        JsonStrings.writeUtf8(c, out);
      }
    }
    int end = out.len;
    out.len = lengthAt;
    writeInt(end - lengthAt - 4, out);
    out.len = end;
  }

  private static void writeInt(int value, ByteSink out) {
    out.write((byte) (value >>> 24));
    out.write((byte) (value >>> 16));
    out.write((byte) (value >>> 8));
    out.write((byte) value);
  }
}

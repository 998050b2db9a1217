package dev.once.fingerprint;

import java.util.Arrays;

/**
 * A growable byte buffer whose array and length the parser reads and writes directly, so that the
 * hot loops keep them in locals instead of paying a call per byte.
 */
final class ByteSink {

  /**
   * Up to this many bytes a plain loop beats {@link System#arraycopy}, whose stub call costs more
   * than copying a member name or a number.
   */
  private static final int SHORT_COPY = 32;

  byte[] buf;
  int len;

  ByteSink(int capacity) {
    buf = new byte[capacity];
  }

  /** Empties the sink and makes room for at least {@code capacity} bytes. */
  void reset(int capacity) {
    len = 0;
    if (buf.length < capacity) {
      buf = new byte[capacity];
    }
  }

  /** Makes room for at least {@code capacity} bytes in total, keeping the content. */
  void ensure(int capacity) {
    if (buf.length < capacity) {
      buf = Arrays.copyOf(buf, Math.max(capacity, buf.length + (buf.length >> 1)));
    }
  }

  void write(byte b) {
    buf[len++] = b;
  }

  void write(byte[] src, int offset, int length) {
    if (length <= SHORT_COPY) {
      byte[] dst = buf;
      int o = len;
      for (int i = 0; i < length; i++) {
        dst[o + i] = src[offset + i];
      }
    } else {
      System.arraycopy(src, offset, buf, len, length);
    }
    len += length;
  }

  /**
   * Drops the array if a huge input made it grow past {@code limit}, so that a thread that once saw
   * a large body does not hold on to its memory for ever.
   */
  void shrinkTo(int limit, int capacity) {
    if (buf.length > limit) {
      buf = new byte[capacity];
    }
    len = 0;
  }

  byte[] toByteArray() {
    return Arrays.copyOf(buf, len);
  }
}

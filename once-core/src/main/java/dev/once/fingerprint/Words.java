package dev.once.fingerprint;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Reads and writes byte arrays eight bytes at a time, little-endian, so that the first byte of a
 * word is its lowest. The JIT compiles these to single unaligned loads and stores.
 */
final class Words {

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private Words() {}

  static long get(byte[] bytes, int offset) {
    return (long) LONGS.get(bytes, offset);
  }

  static void set(byte[] bytes, int offset, long word) {
    LONGS.set(bytes, offset, word);
  }
}

package dev.once;

import java.nio.charset.StandardCharsets;

/**
 * Turns an operation's result into bytes to store, and back for a replay. HTTP integrations supply
 * one for responses; {@link #bytes()} and {@link #utf8()} cover the simple cases.
 *
 * @param <T> the result type
 */
public interface ResultCodec<T> {

  byte[] encode(T value);

  T decode(byte[] bytes);

  /** Stores byte arrays as they are. */
  static ResultCodec<byte[]> bytes() {
    return Codecs.BYTES;
  }

  /** Stores strings as UTF-8. */
  static ResultCodec<String> utf8() {
    return Codecs.UTF8;
  }
}

final class Codecs {
  static final ResultCodec<byte[]> BYTES =
      new ResultCodec<>() {
        @Override
        public byte[] encode(byte[] value) {
          return value;
        }

        @Override
        public byte[] decode(byte[] bytes) {
          return bytes;
        }
      };
  static final ResultCodec<String> UTF8 =
      new ResultCodec<>() {
        @Override
        public byte[] encode(String value) {
          return value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
          return new String(bytes, StandardCharsets.UTF_8);
        }
      };

  private Codecs() {}
}

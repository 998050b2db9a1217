package dev.once.store.dynamodb;

import java.io.ByteArrayOutputStream;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import software.amazon.awssdk.core.SdkBytes;

/**
 * Results and recovery points as stored: one header byte, then the value, raw or deflated.
 *
 * <p>A DynamoDB item holds at most 400 KB, so values of {@value #COMPRESS_FROM} bytes or more are
 * deflated when that makes them smaller (JSON bodies typically shrink to a fifth); others, and
 * values that do not shrink (already compressed, random), are stored raw. The header says which, so
 * the threshold can change without breaking stored records.
 */
final class BinaryValues {

  static final int COMPRESS_FROM = 1024;

  private static final byte RAW = 0;
  private static final byte DEFLATED = 1;

  private BinaryValues() {}

  static SdkBytes encode(byte[] value) {
    if (value.length >= COMPRESS_FROM) {
      byte[] deflated = deflate(value);
      if (deflated.length < value.length) {
        return withHeader(DEFLATED, deflated);
      }
    }
    return withHeader(RAW, value);
  }

  static byte[] decode(SdkBytes stored) {
    byte[] bytes = stored.asByteArrayUnsafe();
    if (bytes.length == 0) {
      throw new IllegalStateException("a stored value has no header byte");
    }
    return switch (bytes[0]) {
      case RAW -> java.util.Arrays.copyOfRange(bytes, 1, bytes.length);
      case DEFLATED -> inflate(bytes);
      default ->
          throw new IllegalStateException("a stored value has an unknown encoding " + bytes[0]);
    };
  }

  private static SdkBytes withHeader(byte header, byte[] body) {
    byte[] out = new byte[body.length + 1];
    out[0] = header;
    System.arraycopy(body, 0, out, 1, body.length);
    return SdkBytes.fromByteArrayUnsafe(out);
  }

  private static byte[] deflate(byte[] value) {
    Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
    try {
      deflater.setInput(value);
      deflater.finish();
      ByteArrayOutputStream out = new ByteArrayOutputStream(value.length / 4 + 64);
      byte[] buffer = new byte[16 * 1024];
      while (!deflater.finished()) {
        out.write(buffer, 0, deflater.deflate(buffer));
        if (out.size() >= value.length) {
          return value; // it does not shrink: not worth storing deflated
        }
      }
      return out.toByteArray();
    } finally {
      deflater.end();
    }
  }

  private static byte[] inflate(byte[] stored) {
    Inflater inflater = new Inflater(true);
    try {
      inflater.setInput(stored, 1, stored.length - 1);
      ByteArrayOutputStream out = new ByteArrayOutputStream(stored.length * 4);
      byte[] buffer = new byte[16 * 1024];
      while (!inflater.finished()) {
        int n = inflater.inflate(buffer);
        if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
          throw new IllegalStateException("a stored value is truncated");
        }
        out.write(buffer, 0, n);
      }
      return out.toByteArray();
    } catch (DataFormatException e) {
      throw new IllegalStateException("a stored value is corrupt", e);
    } finally {
      inflater.end();
    }
  }
}

package dev.once.http;

import dev.once.ResultCodec;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Binary form of a {@link StoredResponse}: a format version byte, the status, the header count,
 * each name and value as length-prefixed UTF-8, then the body. Versioned so records written by an
 * older release stay readable.
 */
final class StoredResponseCodec implements ResultCodec<StoredResponse> {

  private static final int VERSION = 1;

  /** The header count is written as an unsigned short. */
  private static final int MAX_HEADERS = 0xFFFF;

  @Override
  public byte[] encode(StoredResponse response) {
    if (response.headers().size() > MAX_HEADERS) {
      // Written as it is, the count would wrap around and the record would replay garbage.
      throw new IllegalArgumentException(
          "a stored response holds at most "
              + MAX_HEADERS
              + " header fields, this one "
              + response.headers().size());
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + response.body().length);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.writeShort(response.status());
      out.writeShort(response.headers().size());
      for (Headers.Field f : response.headers()) {
        writeString(out, f.name());
        writeString(out, f.value());
      }
      out.writeInt(response.body().length);
      out.write(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  @Override
  public StoredResponse decode(byte[] bytes) {
    try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes))) {
      int version = in.readUnsignedByte();
      if (version != VERSION) {
        throw new IllegalArgumentException("unknown stored response format " + version);
      }
      int status = in.readUnsignedShort();
      int count = in.readUnsignedShort();
      Headers.Builder headers = Headers.builder();
      for (int i = 0; i < count; i++) {
        headers.add(readString(in), readString(in));
      }
      int length = in.readInt();
      if (length < 0 || length > in.available()) {
        throw new IllegalArgumentException("stored response body length is corrupt");
      }
      byte[] body = in.readNBytes(length);
      return new StoredResponse(status, headers.build(), body);
    } catch (IOException e) {
      throw new IllegalArgumentException("stored response is truncated", e);
    }
  }

  private static void writeString(DataOutputStream out, String s) throws IOException {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  private static String readString(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > in.available()) {
      throw new IOException("string length is corrupt");
    }
    return new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }
}

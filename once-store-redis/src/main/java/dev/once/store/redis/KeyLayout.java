package dev.once.store.redis;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.RecordId;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Where a record lives: the key of its hash and the channel its changes are published on.
 *
 * <p>A record's key is {@code <prefix>{<scope>|<key>}} and its channel {@code
 * <prefix>changed:{<scope>|<key>}}. The braces are a Redis Cluster hash tag, so everything that
 * belongs to one record hashes to one slot, as a script that touches it requires. Inside the tag,
 * {@code %}, {@code {}, {@code }} and {@code |} in the scope and the key are percent-encoded: that
 * keeps the tag closed where it should be, and two different (scope, key) pairs never share a name
 * (without it, scope {@code a|b} with key {@code c} and scope {@code a} with key {@code b|c}
 * would).
 */
final class KeyLayout {

  private static final byte[] HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);

  private final byte[] recordPrefix;
  private final byte[] channelPrefix;

  KeyLayout(String prefix) {
    this.recordPrefix = (prefix + "{").getBytes(StandardCharsets.US_ASCII);
    this.channelPrefix = (prefix + "changed:{").getBytes(StandardCharsets.US_ASCII);
  }

  byte[] recordKey(RecordId id) {
    return name(recordPrefix, id);
  }

  byte[] channel(RecordId id) {
    return channelOfKey(recordKey(id));
  }

  /**
   * The channel of the record whose key is {@code recordKey}: the same hash tag under the channel
   * prefix. The one definition of a channel; a batch with its records' keys in hand calls it
   * directly, so no name is escaped twice.
   */
  byte[] channelOfKey(byte[] recordKey) {
    int tagLength = recordKey.length - recordPrefix.length;
    byte[] channel = new byte[channelPrefix.length + tagLength];
    System.arraycopy(channelPrefix, 0, channel, 0, channelPrefix.length);
    System.arraycopy(recordKey, recordPrefix.length, channel, channelPrefix.length, tagLength);
    return channel;
  }

  /**
   * The record whose key is {@code recordKey}, decoded from its hash tag; {@code null} if the key
   * is not one this layout wrote (something else shares the prefix).
   */
  @Nullable RecordId idOf(byte[] recordKey) {
    int end = recordKey.length - 1;
    if (end <= recordPrefix.length || recordKey[end] != '}') {
      return null;
    }
    int bar = -1;
    for (int i = recordPrefix.length; i < end; i++) {
      if (recordKey[i] == '|') {
        if (bar >= 0) {
          return null;
        }
        bar = i;
      }
    }
    if (bar < 0) {
      return null;
    }
    try {
      String scope = unescape(recordKey, recordPrefix.length, bar, StandardCharsets.UTF_8);
      String key = unescape(recordKey, bar + 1, end, StandardCharsets.US_ASCII);
      return RecordId.of(new Scope(scope), IdempotencyKey.of(key));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String unescape(byte[] in, int from, int to, java.nio.charset.Charset charset) {
    byte[] out = new byte[to - from];
    int n = 0;
    for (int i = from; i < to; i++) {
      if (in[i] == '%') {
        if (i + 2 >= to) {
          throw new IllegalArgumentException("a truncated escape");
        }
        out[n++] = (byte) Integer.parseInt(new String(in, i + 1, 2, StandardCharsets.US_ASCII), 16);
        i += 2;
      } else {
        out[n++] = in[i];
      }
    }
    return new String(out, 0, n, charset);
  }

  /** A SCAN MATCH pattern for every record key under the prefix, glob characters in it escaped. */
  String scanPattern() {
    String prefix = new String(recordPrefix, StandardCharsets.US_ASCII);
    StringBuilder sb = new StringBuilder(prefix.length() + 8);
    for (int i = 0; i < prefix.length(); i++) {
      char c = prefix.charAt(i);
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.append('*').toString();
  }

  /**
   * Builds the name in one exactly sized array: a request names its record three or four times, so
   * this is on the hot path (a {@code ByteArrayOutputStream} locked once per byte here, and was the
   * largest Java frame of the gateway's Redis profile).
   */
  private static byte[] name(byte[] prefix, RecordId id) {
    byte[] scope = id.scope().value().getBytes(StandardCharsets.UTF_8);
    byte[] key = id.key().value().getBytes(StandardCharsets.US_ASCII);
    byte[] name = new byte[prefix.length + escapedLength(scope) + 1 + escapedLength(key) + 1];
    System.arraycopy(prefix, 0, name, 0, prefix.length);
    int at = escape(scope, name, prefix.length);
    name[at++] = '|';
    at = escape(key, name, at);
    name[at] = '}';
    return name;
  }

  private static int escapedLength(byte[] bytes) {
    int length = bytes.length;
    for (byte b : bytes) {
      if (special(b)) {
        length += 2;
      }
    }
    return length;
  }

  /**
   * Writes {@code bytes} percent-encoded into {@code out} from {@code at}; returns where it ended.
   */
  private static int escape(byte[] bytes, byte[] out, int at) {
    for (byte b : bytes) {
      if (special(b)) {
        out[at++] = '%';
        out[at++] = HEX[(b >> 4) & 0xF];
        out[at++] = HEX[b & 0xF];
      } else {
        out[at++] = b;
      }
    }
    return at;
  }

  private static boolean special(byte b) {
    return b == '%' || b == '{' || b == '}' || b == '|';
  }
}

package dev.once.outbox;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;

/**
 * Derives the downstream {@code Idempotency-Key} of a message: a name-based UUID (RFC 9562 version
 * 5) of the outbox name and the message id. The same message always gets the same key, so the
 * downstream deduplicates the relay's retries; two outboxes (or services) that happen to use the
 * same message ids get different keys, so they cannot collide in a shared downstream scope.
 */
final class Keys {

  /** The namespace of every outbox key; fixed forever, or keys of pending rows would change. */
  private static final UUID NAMESPACE = UUID.fromString("5f0c3b8e-6a47-4e0f-9b9e-0a1d6f1c7e21");

  private Keys() {}

  static String idempotencyKey(String outboxName, String messageId) {
    MessageDigest sha1;
    try {
      sha1 = MessageDigest.getInstance("SHA-1");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-1", e);
    }
    ByteBuffer ns = ByteBuffer.allocate(16);
    ns.putLong(NAMESPACE.getMostSignificantBits()).putLong(NAMESPACE.getLeastSignificantBits());
    sha1.update(ns.array());
    // Neither part has a line break (both are printable ASCII), so the pair is unambiguous.
    sha1.update((outboxName + "\n" + messageId).getBytes(StandardCharsets.US_ASCII));
    byte[] h = sha1.digest();
    h[6] = (byte) ((h[6] & 0x0f) | 0x50); // version 5
    h[8] = (byte) ((h[8] & 0x3f) | 0x80); // IETF variant
    ByteBuffer b = ByteBuffer.wrap(h, 0, 16);
    return new UUID(b.getLong(), b.getLong()).toString();
  }
}

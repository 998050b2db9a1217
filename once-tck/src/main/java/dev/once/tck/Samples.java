package dev.once.tck;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.RecordId;
import java.util.HexFormat;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Fresh values for one test. Every scope carries a random UUID, so tests never see each other's
 * records even when a store is shared between tests, runs, or machines. Public so that a store's
 * own tests can use the same values.
 */
public final class Samples {

  private Samples() {}

  static String unique() {
    return UUID.randomUUID().toString();
  }

  static Scope newScope() {
    return Scope.of("once-tck", unique());
  }

  /** A record id in a fresh scope. */
  public static RecordId newId() {
    return RecordId.of(newScope(), IdempotencyKey.of("key-" + unique()));
  }

  /** A random version-1 fingerprint. */
  public static Fingerprint newFingerprint() {
    byte[] digest = new byte[32];
    ThreadLocalRandom.current().nextBytes(digest);
    return new Fingerprint(1, HexFormat.of().formatHex(digest));
  }

  static byte[] randomBytes(int length, long seed) {
    byte[] bytes = new byte[length];
    new Random(seed).nextBytes(bytes);
    return bytes;
  }

  static byte[] everyByteValue() {
    byte[] bytes = new byte[512];
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] = (byte) i;
    }
    return bytes;
  }
}

package dev.once.store.lincheck;

import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.store.IdempotencyRecord;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Turns store results into strings that Lincheck compares with {@code equals}: records with byte
 * arrays compare arrays by identity, and every field that a caller can see must be compared.
 */
final class Describe {

  static final String FINGERPRINT_HEX = "00112233445566778899aabbccddeeff";

  private Describe() {}

  static String claim(ClaimResult result) {
    if (result instanceof Claimed c) {
      return "claimed token="
          + c.token()
          + " leaseUntil="
          + c.leaseUntil().getEpochSecond()
          + (c.stolen() ? " stolen recoveryPoint=" + bytes(c.recoveryPoint()) : "");
    }
    return "existing " + record(((Existing) result).record());
  }

  static String get(Optional<IdempotencyRecord> record) {
    return record.map(Describe::record).orElse("absent");
  }

  static String record(IdempotencyRecord r) {
    return r.state()
        + " token="
        + r.token()
        + " fingerprint="
        + r.fingerprint().version()
        + " leaseUntil="
        + r.leaseUntil().getEpochSecond()
        + " expiresAt="
        + r.expiresAt().getEpochSecond()
        + " recoveryPoint="
        + bytes(r.recoveryPoint())
        + " result="
        + bytes(r.result())
        + " observedAt="
        + r.observedAt().getEpochSecond();
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String bytes(byte[] b) {
    return b == null ? "none" : new String(b, StandardCharsets.UTF_8);
  }
}

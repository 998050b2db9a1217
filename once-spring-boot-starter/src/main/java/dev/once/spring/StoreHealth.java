package dev.once.spring;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code once} health check, apart from the health API it reports through (Boot 3's and Boot
 * 4's differ: {@code OnceHealthConfiguration} in src/boot3/java and src/boot4/java). The store is
 * up if it answers a read of a sentinel record (which never exists): one cheap round trip, and
 * nothing written. A store that cannot answer within its own timeout is down.
 */
final class StoreHealth {

  private static final RecordId SENTINEL =
      RecordId.of(Scope.of("once", "health"), IdempotencyKey.of("sentinel"));

  /** What a failed check says, beside the store's exception. */
  static final String FAILED = "Idempotency store health check failed";

  private StoreHealth() {}

  /** Reads the sentinel and returns an up store's details; throws what the store throws. */
  static Map<String, Object> check(IdempotencyStore store) {
    long start = System.nanoTime();
    store.get(SENTINEL);
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("store", store.getClass().getSimpleName());
    details.put("latencyMillis", (System.nanoTime() - start) / 1_000_000);
    return details;
  }
}

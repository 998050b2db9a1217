package dev.once.spring;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * The store is up if it answers a read of a sentinel record (which never exists): one cheap round
 * trip, and nothing written. A store that cannot answer within its own timeout is down.
 */
final class OnceStoreHealthIndicator extends AbstractHealthIndicator {

  private static final RecordId SENTINEL =
      RecordId.of(Scope.of("once", "health"), IdempotencyKey.of("sentinel"));

  private final IdempotencyStore store;

  OnceStoreHealthIndicator(IdempotencyStore store) {
    super("Idempotency store health check failed");
    this.store = store;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    long start = System.nanoTime();
    store.get(SENTINEL);
    builder
        .up()
        .withDetail("store", store.getClass().getSimpleName())
        .withDetail("latencyMillis", (System.nanoTime() - start) / 1_000_000);
  }
}

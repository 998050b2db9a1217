package dev.once;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store whose server is down: every call fails as a real one would, and is counted. Shared with
 * other modules through the test jar.
 */
public final class FakeUnavailableStore implements IdempotencyStore {
  public final AtomicInteger calls = new AtomicInteger();

  private StoreUnavailableException down() {
    calls.incrementAndGet();
    return new StoreUnavailableException("connection refused (fake)");
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    throw down();
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    throw down();
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    throw down();
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] point, Duration lease) {
    throw down();
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    throw down();
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    throw down();
  }

  @Override
  public boolean release(RecordId id, long token) {
    throw down();
  }

  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    throw down();
  }

  @Override
  public int purgeExpired(int batchSize) {
    throw down();
  }
}

package dev.once.store;

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A store that forwards every call to {@link #delegate()}: extend it to decorate a store (timing,
 * tracing, routing to a transaction-bound store) and override only the calls you change.
 */
public abstract class ForwardingStore implements IdempotencyStore {

  protected ForwardingStore() {}

  /** The store calls go to; it may differ from call to call. */
  protected abstract IdempotencyStore delegate();

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return delegate().claim(request);
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return delegate().get(id);
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return delegate().heartbeat(id, token, lease);
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    return delegate().heartbeat(leases, lease);
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return delegate().checkpoint(id, token, recoveryPoint, lease);
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return delegate().complete(id, token, result, ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return delegate().failFinal(id, token, result, ttl);
  }

  @Override
  public boolean release(RecordId id, long token) {
    return delegate().release(id, token);
  }

  @Override
  public boolean endLease(RecordId id, long token) {
    return delegate().endLease(id, token);
  }

  @Override
  public int purgeExpired(int batchSize) {
    return delegate().purgeExpired(batchSize);
  }

  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    return delegate().inFlight(olderThan, limit);
  }

  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    return delegate().awaitChange(id);
  }

  @Override
  public boolean notifiesChanges() {
    return delegate().notifiesChanges();
  }

  @Override
  public void close() {
    delegate().close();
  }
}

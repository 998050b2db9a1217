package dev.once.spring;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** A JDBC store whose calls join the guarded request's transaction when there is one (see {@link TransactionJoin}). */
final class JoiningStore implements IdempotencyStore {

  private final IdempotencyStore plain;
  private final TransactionJoin join;

  JoiningStore(IdempotencyStore plain, TransactionJoin join) {
    this.plain = plain;
    this.join = join;
  }

  private IdempotencyStore store() {
    IdempotencyStore joined = join.current();
    return joined != null ? joined : plain;
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return store().claim(request);
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return store().get(id);
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return store().heartbeat(id, token, lease);
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return store().checkpoint(id, token, recoveryPoint, lease);
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return store().complete(id, token, result, ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return store().failFinal(id, token, result, ttl);
  }

  @Override
  public boolean release(RecordId id, long token) {
    return store().release(id, token);
  }

  @Override
  public int purgeExpired(int batchSize) {
    return plain.purgeExpired(batchSize);
  }

  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    return plain.awaitChange(id);
  }

  @Override
  public boolean notifiesChanges() {
    return plain.notifiesChanges();
  }

  @Override
  public String toString() {
    return "JoiningStore[" + plain + "]";
  }
}

package dev.once.spring;

import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.util.concurrent.CompletableFuture;

/**
 * A JDBC store whose calls join the guarded request's transaction when there is one (see {@link
 * TransactionJoin}).
 */
final class JoiningStore extends ForwardingStore {

  private final IdempotencyStore plain;
  private final TransactionJoin join;

  JoiningStore(IdempotencyStore plain, TransactionJoin join) {
    this.plain = plain;
    this.join = join;
  }

  @Override
  protected IdempotencyStore delegate() {
    IdempotencyStore joined = join.current();
    return joined != null ? joined : plain;
  }

  // Purging and waiting are never part of a request's transaction: always on the plain store.
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

package dev.once.spring;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A JDBC store whose calls join the guarded request's transaction when there is one (see {@link
 * TransactionJoin}).
 *
 * <p>Outside a transaction it is the plain store, gathering included: the engine gathers the claims
 * and outcomes of concurrent requests into shared transactions on a database store, and every
 * request that is not transactional keeps that. Inside one, {@link #batchesOnThisThread} says no,
 * so the request's claim and outcome stay in its own transaction.
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

  @Override
  public boolean batches() {
    return plain.batches();
  }

  @Override
  public int batchesAtOnce() {
    return plain.batchesAtOnce();
  }

  @Override
  public boolean batchesOnThisThread() {
    return join.current() == null && plain.batchesOnThisThread();
  }

  /**
   * The plain store's batch outside a transaction; inside, the SPI's one-call-per-record default,
   * each call joined.
   */
  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return join.current() == null ? plain.claimAll(requests) : super.claimAll(requests);
  }

  /** As {@link #claimAll}: the plain store's batch, or one joined write at a time. */
  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return join.current() == null ? plain.finishAll(finishes) : super.finishAll(finishes);
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

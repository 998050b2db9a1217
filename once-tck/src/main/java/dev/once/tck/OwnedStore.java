package dev.once.tck;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * A store for tests, together with what it was opened on (a connection pool, a client, a table to
 * drop), which {@link #close()} closes after the store. Every call goes to the store as it is,
 * batching included: a test's wrapper that said {@code batches()} false, as a decorator does, would
 * hide the gathering that users run, and concurrent duplicates in one batch went unseen that way.
 */
public final class OwnedStore extends ForwardingStore {

  /** What closes the resources under the store. */
  @FunctionalInterface
  public interface Cleanup {
    void run() throws Exception;
  }

  private final IdempotencyStore store;
  private final Cleanup cleanup;

  private OwnedStore(IdempotencyStore store, Cleanup cleanup) {
    this.store = Objects.requireNonNull(store, "store");
    this.cleanup = Objects.requireNonNull(cleanup, "cleanup");
  }

  /** The store, and what to close after it. */
  public static OwnedStore of(IdempotencyStore store, Cleanup cleanup) {
    return new OwnedStore(store, cleanup);
  }

  @Override
  protected IdempotencyStore delegate() {
    return store;
  }

  @Override
  public boolean batches() {
    return store.batches();
  }

  @Override
  public int batchesAtOnce() {
    return store.batchesAtOnce();
  }

  @Override
  public boolean batchesOnThisThread() {
    return store.batchesOnThisThread();
  }

  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return store.claimAll(requests);
  }

  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return store.finishAll(finishes);
  }

  @Override
  public CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    return store.claimAllAsync(requests, blocking);
  }

  @Override
  public CompletionStage<List<Boolean>> finishAllAsync(List<Finish> finishes, Executor blocking) {
    return store.finishAllAsync(finishes, blocking);
  }

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return store.claimAsync(request, blocking);
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return store.getAsync(id, blocking);
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return store.completeAsync(id, token, result, ttl, blocking);
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return store.failFinalAsync(id, token, result, ttl, blocking);
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return store.releaseAsync(id, token, blocking);
  }

  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return store.endLeaseAsync(id, token, blocking);
  }

  @Override
  public CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, Duration lease, Executor blocking) {
    return store.heartbeatAsync(leases, lease, blocking);
  }

  @Override
  public void close() {
    try {
      store.close();
    } finally {
      try {
        cleanup.run();
      } catch (Exception e) {
        throw new IllegalStateException("could not clean up after the store", e);
      }
    }
  }
}

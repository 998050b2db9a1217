package dev.once;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/** Reports each store call's duration to a listener; only installed when someone listens. */
final class TimedStore extends ForwardingStore {

  private final IdempotencyStore delegate;
  private final OnceListener listener;

  TimedStore(IdempotencyStore delegate, OnceListener listener) {
    this.delegate = delegate;
    this.listener = listener;
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  private <T> T timed(String op, Supplier<T> call) {
    long start = System.nanoTime();
    try {
      return call.get();
    } finally {
      timed(op, start);
    }
  }

  private void timed(String op, long start) {
    try {
      listener.onStoreCall(op, System.nanoTime() - start);
    } catch (RuntimeException ignored) {
      // A broken listener must never break a store call.
    }
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return timed("claim", () -> delegate.claim(request));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return timed("get", () -> delegate.get(id));
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return timed("heartbeat", () -> delegate.heartbeat(id, token, lease));
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    return timed("heartbeatBatch", () -> delegate.heartbeat(leases, lease));
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return timed("checkpoint", () -> delegate.checkpoint(id, token, recoveryPoint, lease));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return timed("complete", () -> delegate.complete(id, token, result, ttl));
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return timed("failFinal", () -> delegate.failFinal(id, token, result, ttl));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return timed("release", () -> delegate.release(id, token));
  }

  @Override
  public int purgeExpired(int batchSize) {
    return timed("purgeExpired", () -> delegate.purgeExpired(batchSize));
  }

  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    return timed("inFlight", () -> delegate.inFlight(olderThan, limit));
  }

  // The asynchronous calls are timed from the call to the reply, whichever thread completes them.

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return timedAsync("claim", () -> delegate.claimAsync(request, blocking));
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return timedAsync("get", () -> delegate.getAsync(id, blocking));
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return timedAsync("complete", () -> delegate.completeAsync(id, token, result, ttl, blocking));
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return timedAsync("failFinal", () -> delegate.failFinalAsync(id, token, result, ttl, blocking));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return timedAsync("release", () -> delegate.releaseAsync(id, token, blocking));
  }

  // Batches keep the store's batching (a decorator's default would split them) and are timed as
  // one call each: the listener sees the round trips the store made.

  @Override
  public boolean batches() {
    return delegate.batches();
  }

  @Override
  public boolean batchesOnThisThread() {
    return delegate.batchesOnThisThread();
  }

  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return timed("claimBatch", () -> delegate.claimAll(requests));
  }

  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return timed("finishBatch", () -> delegate.finishAll(finishes));
  }

  @Override
  public CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    return timedAsync("claimBatch", () -> delegate.claimAllAsync(requests, blocking));
  }

  @Override
  public CompletionStage<List<Boolean>> finishAllAsync(List<Finish> finishes, Executor blocking) {
    return timedAsync("finishBatch", () -> delegate.finishAllAsync(finishes, blocking));
  }

  @Override
  public CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, Duration lease, Executor blocking) {
    return timedAsync("heartbeatBatch", () -> delegate.heartbeatAsync(leases, lease, blocking));
  }

  private <T> CompletionStage<T> timedAsync(String op, Supplier<CompletionStage<T>> call) {
    long start = System.nanoTime();
    return call.get().whenComplete((result, failure) -> timed(op, start));
  }
}

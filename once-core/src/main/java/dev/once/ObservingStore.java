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
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place store calls are observed: each call is a {@link StoreCall} of the listener, opened
 * on the calling thread just before it and ended when it answers. Only installed when someone
 * listens.
 */
final class ObservingStore extends ForwardingStore {

  private static final Logger log = LoggerFactory.getLogger(ObservingStore.class);

  private final IdempotencyStore delegate;
  private final OnceListener listener;

  ObservingStore(IdempotencyStore delegate, OnceListener listener) {
    this.delegate = delegate;
    this.listener = listener;
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  private <T> T observed(String op, Supplier<T> call) {
    StoreCall observed = open(op);
    Throwable failure = null;
    try {
      return call.get();
    } catch (RuntimeException | Error e) {
      failure = e;
      throw e;
    } finally {
      sent(observed);
      ended(observed, failure);
    }
  }

  /**
   * An asynchronous call, sent by {@code call} with the executor a blocking store makes it on: that
   * executor runs it {@link StoreCall#within} the observation, so the client's spans go beneath it
   * there too.
   */
  private <T> CompletionStage<T> observedAsync(
      String op, Executor blocking, Function<Executor, CompletionStage<T>> call) {
    StoreCall observed = open(op);
    CompletionStage<T> stage;
    try {
      stage = call.apply(task -> blocking.execute(within(observed, task)));
    } catch (RuntimeException | Error e) {
      sent(observed);
      ended(observed, e);
      throw e;
    }
    sent(observed);
    return stage.whenComplete((result, failure) -> ended(observed, failure));
  }

  // A broken listener must never break a store call: what it throws is logged and ignored.

  private StoreCall open(String op) {
    try {
      return Objects.requireNonNull(listener.storeCall(op), "the listener opened no store call");
    } catch (RuntimeException e) {
      log.warn("the listener failed to open the observation of a store call ({})", op, e);
      return failure -> {};
    }
  }

  private static void sent(StoreCall observed) {
    try {
      observed.sent();
    } catch (RuntimeException e) {
      log.warn("the observation of a store call failed when it was sent", e);
    }
  }

  private static void ended(StoreCall observed, @Nullable Throwable failure) {
    try {
      observed.ended(failure);
    } catch (RuntimeException e) {
      log.warn("the observation of a store call failed when it ended", e);
    }
  }

  private static Runnable within(StoreCall observed, Runnable task) {
    try {
      return Objects.requireNonNull(observed.within(task), "the observation wrapped no task");
    } catch (RuntimeException e) {
      log.warn("the observation of a store call could not wrap its task", e);
      return task;
    }
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return observed("claim", () -> delegate.claim(request));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return observed("get", () -> delegate.get(id));
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return observed("heartbeat", () -> delegate.heartbeat(id, token, lease));
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    return observed("heartbeatBatch", () -> delegate.heartbeat(leases, lease));
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return observed("checkpoint", () -> delegate.checkpoint(id, token, recoveryPoint, lease));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return observed("complete", () -> delegate.complete(id, token, result, ttl));
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return observed("failFinal", () -> delegate.failFinal(id, token, result, ttl));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return observed("release", () -> delegate.release(id, token));
  }

  @Override
  public boolean endLease(RecordId id, long token) {
    return observed("endLease", () -> delegate.endLease(id, token));
  }

  @Override
  public int purgeExpired(int batchSize) {
    return observed("purgeExpired", () -> delegate.purgeExpired(batchSize));
  }

  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    return observed("inFlight", () -> delegate.inFlight(olderThan, limit));
  }

  // The asynchronous calls are observed from the call to the reply, whichever thread completes
  // them.

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return observedAsync("claim", blocking, on -> delegate.claimAsync(request, on));
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return observedAsync("get", blocking, on -> delegate.getAsync(id, on));
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return observedAsync(
        "complete", blocking, on -> delegate.completeAsync(id, token, result, ttl, on));
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return observedAsync(
        "failFinal", blocking, on -> delegate.failFinalAsync(id, token, result, ttl, on));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return observedAsync("release", blocking, on -> delegate.releaseAsync(id, token, on));
  }

  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return observedAsync("endLease", blocking, on -> delegate.endLeaseAsync(id, token, on));
  }

  // Batches keep the store's batching (a decorator's default would split them) and are timed as
  // one call each: the listener sees the round trips the store made.

  @Override
  public boolean batches() {
    return delegate.batches();
  }

  @Override
  public int batchesAtOnce() {
    return delegate.batchesAtOnce();
  }

  @Override
  public boolean batchesOnThisThread() {
    return delegate.batchesOnThisThread();
  }

  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return observed("claimBatch", () -> delegate.claimAll(requests));
  }

  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return observed("finishBatch", () -> delegate.finishAll(finishes));
  }

  @Override
  public CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    return observedAsync("claimBatch", blocking, on -> delegate.claimAllAsync(requests, on));
  }

  @Override
  public CompletionStage<List<Boolean>> finishAllAsync(List<Finish> finishes, Executor blocking) {
    return observedAsync("finishBatch", blocking, on -> delegate.finishAllAsync(finishes, on));
  }

  @Override
  public CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, Duration lease, Executor blocking) {
    return observedAsync(
        "heartbeatBatch", blocking, on -> delegate.heartbeatAsync(leases, lease, on));
  }
}

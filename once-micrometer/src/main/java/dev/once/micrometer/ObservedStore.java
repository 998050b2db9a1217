package dev.once.micrometer;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * A store whose calls are Micrometer {@link Observation}s named {@value #NAME}, with the low
 * cardinality key {@code operation} ({@code claim}, {@code complete}, …): a span per store call in
 * a trace, and a timer where a meter handler is registered. Keys and scopes are never attached.
 *
 * <pre>{@code
 * Once once = Once.of(ObservedStore.wrap(store, observationRegistry));
 * }</pre>
 *
 * @deprecated the engine observes its store calls in one place, its listener's {@link
 *     dev.once.OnceListener#storeCall}; {@link ObservedEvents} makes the same observations there,
 *     beneath which the store client's own spans go, blocking or not: {@code
 *     Once.builder(store).listener(ObservedEvents.of(registry))}. Wrapping the store as well would
 *     observe every call twice.
 */
@Deprecated(since = "0.1.0", forRemoval = true)
public final class ObservedStore extends ForwardingStore {

  /** The observations' name. */
  public static final String NAME = ObservedEvents.STORE_CALL;

  private final IdempotencyStore delegate;
  private final ObservationRegistry registry;

  private ObservedStore(IdempotencyStore delegate, ObservationRegistry registry) {
    this.delegate = delegate;
    this.registry = registry;
  }

  /** The store observed in this registry; with the no-op registry, the store itself. */
  public static IdempotencyStore wrap(IdempotencyStore store, ObservationRegistry registry) {
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(registry, "registry");
    return registry.isNoop() ? store : new ObservedStore(store, registry);
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  private <T> T observe(String operation, Supplier<T> call) {
    return ObservedEvents.storeCall(operation, registry).observe(call);
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return observe("claim", () -> delegate.claim(request));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return observe("get", () -> delegate.get(id));
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return observe("heartbeat", () -> delegate.heartbeat(id, token, lease));
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    return observe("heartbeatBatch", () -> delegate.heartbeat(leases, lease));
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return observe("checkpoint", () -> delegate.checkpoint(id, token, recoveryPoint, lease));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return observe("complete", () -> delegate.complete(id, token, result, ttl));
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return observe("failFinal", () -> delegate.failFinal(id, token, result, ttl));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return observe("release", () -> delegate.release(id, token));
  }

  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    return observe("inFlight", () -> delegate.inFlight(olderThan, limit));
  }

  @Override
  public int purgeExpired(int batchSize) {
    return observe("purgeExpired", () -> delegate.purgeExpired(batchSize));
  }

  // Batches keep the store's batching (a decorator's default would split them into single calls)
  // and are observed as one call each: a span per round trip the store made.

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
    return observe("claimBatch", () -> delegate.claimAll(requests));
  }

  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return observe("finishBatch", () -> delegate.finishAll(finishes));
  }

  // The asynchronous calls are forwarded as such: a store whose client is asynchronous (Redis)
  // stays so when observed, instead of falling back to the blocking call on an executor thread.

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return observeAsync("claim", () -> delegate.claimAsync(request, blocking));
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return observeAsync("get", () -> delegate.getAsync(id, blocking));
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return observeAsync("complete", () -> delegate.completeAsync(id, token, result, ttl, blocking));
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return observeAsync(
        "failFinal", () -> delegate.failFinalAsync(id, token, result, ttl, blocking));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return observeAsync("release", () -> delegate.releaseAsync(id, token, blocking));
  }

  @Override
  public CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    return observeAsync("claimBatch", () -> delegate.claimAllAsync(requests, blocking));
  }

  @Override
  public CompletionStage<List<Boolean>> finishAllAsync(List<Finish> finishes, Executor blocking) {
    return observeAsync("finishBatch", () -> delegate.finishAllAsync(finishes, blocking));
  }

  @Override
  public CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, Duration lease, Executor blocking) {
    return observeAsync("heartbeatBatch", () -> delegate.heartbeatAsync(leases, lease, blocking));
  }

  /** An observation from the call until its stage completes; no scope, as no thread waits. */
  private <T> CompletionStage<T> observeAsync(String operation, Supplier<CompletionStage<T>> call) {
    Observation observation = ObservedEvents.storeCall(operation, registry).start();
    CompletionStage<T> stage;
    try {
      stage = call.get();
    } catch (RuntimeException e) {
      observation.error(e);
      observation.stop();
      throw e;
    }
    return stage.whenComplete(
        (result, failure) -> {
          if (failure != null) {
            observation.error(
                failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause()
                    : failure);
          }
          observation.stop();
        });
  }

  @Override
  public String toString() {
    return "ObservedStore[" + delegate + "]";
  }
}

package dev.once;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Collection;
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

  private void timed(String op, long start) {
    try {
      listener.onStoreCall(op, System.nanoTime() - start);
    } catch (RuntimeException ignored) {
      // A broken listener must never break a store call.
    }
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    long start = System.nanoTime();
    try {
      return delegate.claim(request);
    } finally {
      timed("claim", start);
    }
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    long start = System.nanoTime();
    try {
      return delegate.get(id);
    } finally {
      timed("get", start);
    }
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    long start = System.nanoTime();
    try {
      return delegate.heartbeat(id, token, lease);
    } finally {
      timed("heartbeat", start);
    }
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    long start = System.nanoTime();
    try {
      return delegate.heartbeat(leases, lease);
    } finally {
      timed("heartbeatBatch", start);
    }
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    long start = System.nanoTime();
    try {
      return delegate.checkpoint(id, token, recoveryPoint, lease);
    } finally {
      timed("checkpoint", start);
    }
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    long start = System.nanoTime();
    try {
      return delegate.complete(id, token, result, ttl);
    } finally {
      timed("complete", start);
    }
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    long start = System.nanoTime();
    try {
      return delegate.failFinal(id, token, result, ttl);
    } finally {
      timed("failFinal", start);
    }
  }

  @Override
  public boolean release(RecordId id, long token) {
    long start = System.nanoTime();
    try {
      return delegate.release(id, token);
    } finally {
      timed("release", start);
    }
  }

  @Override
  public int purgeExpired(int batchSize) {
    long start = System.nanoTime();
    try {
      return delegate.purgeExpired(batchSize);
    } finally {
      timed("purgeExpired", start);
    }
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

  private <T> CompletionStage<T> timedAsync(String op, Supplier<CompletionStage<T>> call) {
    long start = System.nanoTime();
    return call.get().whenComplete((result, failure) -> timed(op, start));
  }
}

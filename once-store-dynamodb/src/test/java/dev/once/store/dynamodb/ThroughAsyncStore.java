package dev.once.store.dynamodb;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store whose blocking {@code claim}, {@code get}, {@code complete}, {@code failFinal} and {@code
 * release} are its delegate's asynchronous calls, awaited: the store contract kit run on this
 * checks the asynchronous API against every rule the blocking one is held to. The asynchronous
 * calls get an executor that refuses work and counts what it was given, so a call that is not
 * native fails (see {@link #bridgedCalls()}). The test thread waits here, never the store.
 */
final class ThroughAsyncStore extends ForwardingStore {

  private static final long WAIT_SECONDS = 60;

  private final IdempotencyStore delegate;
  private final AtomicInteger bridged = new AtomicInteger();
  private final Executor refusing =
      task -> {
        bridged.incrementAndGet();
        throw new AssertionError("an asynchronous call used the blocking executor");
      };

  ThroughAsyncStore(IdempotencyStore delegate) {
    this.delegate = delegate;
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  /** How many asynchronous calls tried to run on the blocking executor: zero when native. */
  int bridgedCalls() {
    return bridged.get();
  }

  /** The executor the asynchronous calls get: it refuses every task and counts it. */
  Executor refusingExecutor() {
    return refusing;
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return await(delegate.claimAsync(request, refusing));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return await(delegate.getAsync(id, refusing));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return await(delegate.completeAsync(id, token, result, ttl, refusing));
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return await(delegate.failFinalAsync(id, token, result, ttl, refusing));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return await(delegate.releaseAsync(id, token, refusing));
  }

  /**
   * The stage's value, or what it failed with, thrown as the blocking call would throw it. Waits
   * through an interrupt and leaves the flag set, as the blocking calls do.
   */
  static <T> T await(CompletionStage<T> stage) {
    CompletableFuture<T> future = stage.toCompletableFuture();
    try {
      return future.copy().orTimeout(WAIT_SECONDS, TimeUnit.SECONDS).join();
    } catch (CompletionException e) {
      if (!future.isDone()) {
        throw new AssertionError("the stage did not complete within " + WAIT_SECONDS + " s", e);
      }
      // join() wraps what the stage failed with; the stage itself must hold it as is.
      Throwable failure = future.handle((value, raw) -> raw).join();
      if (failure instanceof CompletionException) {
        throw new AssertionError("the stage failed with a wrapped exception", failure);
      }
      if (failure instanceof RuntimeException r) {
        throw r;
      }
      if (failure instanceof Error error) {
        throw error;
      }
      throw new AssertionError(failure);
    }
  }
}

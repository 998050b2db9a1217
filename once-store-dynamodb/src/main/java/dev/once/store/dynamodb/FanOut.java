package dev.once.store.dynamodb;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Runs many single-item calls side by side, for a batched heartbeat. DynamoDB has no multi-item
 * conditional update that lets one item fail and the others succeed ({@code TransactWriteItems} is
 * all or nothing), so it runs the items' own conditional updates, through the sync client, on a
 * pool of its own: a batch of up to {@code concurrency} leases costs about one round trip, a larger
 * one a round trip per {@code concurrency} leases. The pool is shared by every caller of the store,
 * so {@code concurrency} bounds the store's heartbeat requests in flight, whatever the number of
 * heartbeat threads; its threads end after a minute idle.
 *
 * <p>The caller's wait is not cut short by an interrupt (the updates run on, and their outcome is
 * the answer), and is bounded: it ends at the first failure, or after twice the call timeout (an
 * update may need two calls) per {@code concurrency} items and one more, as a backstop should a
 * call outlive its own timeout.
 */
final class FanOut implements AutoCloseable {

  private static final AtomicInteger pools = new AtomicInteger();

  private final int concurrency;
  private final Duration callTimeout;
  private final ThreadPoolExecutor pool;

  FanOut(int concurrency, Duration callTimeout) {
    this.concurrency = concurrency;
    this.callTimeout = callTimeout;
    this.pool =
        new ThreadPoolExecutor(
            concurrency,
            concurrency,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            daemonThreads("once-dynamodb-heartbeat-" + pools.incrementAndGet() + "-"));
    pool.allowCoreThreadTimeOut(true);
  }

  /**
   * Runs {@code test} on every item, at most {@code concurrency} at once across all callers, and
   * returns the items it returned {@code true} for. If one run throws, this throws too (a {@link
   * StoreUnavailableException} wrapped in one that says which batch), and the runs not yet started
   * are dropped.
   */
  <T> Set<T> select(String operation, Collection<T> items, Predicate<T> test) {
    List<T> all = List.copyOf(items);
    CompletableFuture<Void> firstFailure = new CompletableFuture<>();
    List<CompletableFuture<Boolean>> runs = new ArrayList<>(all.size());
    try {
      for (T item : all) {
        CompletableFuture<Boolean> run = CompletableFuture.supplyAsync(() -> test.test(item), pool);
        run.whenComplete(
            (kept, failure) -> {
              if (failure != null) {
                firstFailure.completeExceptionally(failure);
              }
            });
        runs.add(run);
      }
    } catch (RejectedExecutionException e) {
      runs.forEach(run -> run.cancel(false));
      throw new IllegalStateException("the store is closed", e);
    }
    long waves = (all.size() + concurrency - 1) / concurrency;
    Duration bound = callTimeout.multipliedBy(2 * (waves + 1));
    try {
      // join() waits through an interrupt and sets the flag again when it returns.
      CompletableFuture.anyOf(
              CompletableFuture.allOf(runs.toArray(CompletableFuture<?>[]::new)), firstFailure)
          .orTimeout(bound.toNanos(), TimeUnit.NANOSECONDS)
          .join();
    } catch (CompletionException | CancellationException e) {
      runs.forEach(run -> run.cancel(false));
      throw failure(operation, all.size(), bound, e.getCause() != null ? e.getCause() : e);
    }
    Set<T> kept = new HashSet<>();
    for (int i = 0; i < all.size(); i++) {
      if (runs.get(i).join()) {
        kept.add(all.get(i));
      }
    }
    return kept;
  }

  /** Stops the threads once the runs already started are done; later batches are refused. */
  @Override
  public void close() {
    pool.shutdown();
  }

  private static RuntimeException failure(
      String operation, int items, Duration bound, Throwable cause) {
    if (cause instanceof StoreUnavailableException) {
      return new StoreUnavailableException(
          operation + " of " + items + " leases failed: " + cause.getMessage(), cause);
    }
    if (cause instanceof TimeoutException) {
      return new StoreUnavailableException(
          operation + " of " + items + " leases did not finish within " + bound, cause);
    }
    // A configuration or programming error (a missing table), as the single operation throws it.
    return cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}

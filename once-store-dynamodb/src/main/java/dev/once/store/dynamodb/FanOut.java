package dev.once.store.dynamodb;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs many single-item calls side by side, for the batch calls (claims, heartbeats). DynamoDB has
 * no multi-item conditional write that lets one item fail its condition while the others apply
 * ({@code TransactWriteItems} is all or nothing, {@code BatchWriteItem} takes no conditions), so
 * each item keeps its own conditional request, through the sync client, on a pool of the store's
 * own: a batch of up to {@code concurrency} items costs about one round trip, a larger one a round
 * trip per {@code concurrency} items. The pool is shared by every caller of the store, so {@code
 * concurrency} bounds the store's batch requests in flight, whatever the number of calling threads;
 * its threads end after a minute idle.
 *
 * <p>The caller's wait is not cut short by an interrupt (the requests run on, and their outcome is
 * the answer), and is bounded: twice the call timeout (an item may need two calls) per {@code
 * concurrency} items and one more, as a backstop should a call outlive its own timeout.
 */
final class FanOut implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(FanOut.class);
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
            daemonThreads("once-dynamodb-batch-" + pools.incrementAndGet() + "-"));
    pool.allowCoreThreadTimeOut(true);
  }

  /**
   * Runs {@code call} on every item, at most {@code concurrency} at once across all callers, and
   * returns the answers in the items' order.
   *
   * <p>The first call that throws stops the calls not started yet, and the batch fails: once the
   * started calls have ended, {@code undo} is applied to every answer there was (with its item),
   * and this throws (a {@link StoreUnavailableException} wrapped in one that says which batch;
   * anything else as it is). So a batch either answers every item or leaves nothing behind that
   * {@code undo} can take back. An answer that arrives only after the backstop gave up on it is
   * undone when it arrives.
   */
  <T, R> List<R> map(String operation, List<T> items, Function<T, R> call, BiConsumer<T, R> undo) {
    List<CompletableFuture<R>> runs = new ArrayList<>(items.size());
    // Set at the first failure: the calls not started yet are then skipped. (Not cancel(): a
    // CompletableFuture cancelled while its call runs forgets the call's answer, which could then
    // not be undone.)
    AtomicBoolean stopped = new AtomicBoolean();
    Throwable failure = null;
    try {
      for (T item : items) {
        runs.add(
            CompletableFuture.supplyAsync(
                () -> {
                  if (stopped.get()) {
                    throw new NotRun();
                  }
                  try {
                    return call.apply(item);
                  } catch (RuntimeException | Error e) {
                    stopped.set(true);
                    throw e;
                  }
                },
                pool));
      }
    } catch (RejectedExecutionException e) {
      failure = new IllegalStateException("the store is closed", e);
      stopped.set(true);
    }
    long waves = (items.size() + (long) concurrency - 1) / concurrency;
    Duration bound = callTimeout.multipliedBy(2 * (waves + 1));
    boolean timedOut = false;
    try {
      // join() waits through an interrupt and sets the flag again when it returns.
      CompletableFuture.allOf(runs.toArray(CompletableFuture<?>[]::new))
          .orTimeout(bound.toNanos(), TimeUnit.NANOSECONDS)
          .join();
    } catch (CompletionException e) {
      timedOut = unwrap(e) instanceof TimeoutException;
    }
    // Read from the runs themselves, not from their callbacks, which may not have run yet.
    for (int i = 0; i < runs.size() && failure == null; i++) {
      CompletableFuture<R> run = runs.get(i);
      if (run.isCompletedExceptionally()) {
        Throwable failed = run.handle((answer, f) -> unwrap(Objects.requireNonNull(f))).join();
        failure = failed instanceof NotRun ? null : failed;
      }
    }
    Throwable thrown;
    if (failure != null) {
      thrown = failure instanceof Error ? failure : translate(operation, items.size(), failure);
    } else if (timedOut) {
      thrown =
          new StoreUnavailableException(
              operation + " of " + items.size() + " items did not finish within " + bound);
    } else {
      List<R> answers = new ArrayList<>(runs.size());
      runs.forEach(run -> answers.add(run.join()));
      return answers;
    }
    for (int i = 0; i < runs.size(); i++) {
      T item = items.get(i);
      CompletableFuture<R> run = runs.get(i);
      if (run.isDone()) {
        if (!run.isCompletedExceptionally()) {
          undoing(undo, item, run.join(), thrown);
        }
      } else {
        run.whenComplete(
            (late, failed) -> {
              if (failed == null) {
                undoing(undo, item, late, null);
              }
            });
      }
    }
    if (thrown instanceof Error e) {
      throw e;
    }
    throw (RuntimeException) thrown;
  }

  /** Undoes one answer; a failure to is added to the batch's, or logged if that is thrown. */
  private static <T, R> void undoing(
      BiConsumer<T, R> undo, T item, R answer, @Nullable Throwable thrown) {
    try {
      undo.accept(item, answer);
    } catch (RuntimeException e) {
      if (thrown != null) {
        thrown.addSuppressed(e);
      } else {
        log.warn("Could not undo a late answer of a failed batch; it ends with its lease", e);
      }
    }
  }

  /** Stops the threads once the calls already started are done; later batches are refused. */
  @Override
  public void close() {
    pool.shutdown();
  }

  private static RuntimeException translate(String operation, int items, Throwable cause) {
    if (cause instanceof StoreUnavailableException) {
      return new StoreUnavailableException(
          operation + " of " + items + " items failed: " + cause.getMessage(), cause);
    }
    // A configuration or programming error (a missing table), as the single operation throws it.
    return cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
  }

  private static Throwable unwrap(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  /** How a call skipped after the batch's first failure ends; never leaves {@link #map}. */
  private static final class NotRun extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotRun() {
      super("not run: an earlier call of the batch failed", null, false, false);
    }
  }
}

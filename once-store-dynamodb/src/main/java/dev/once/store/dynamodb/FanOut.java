package dev.once.store.dynamodb;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs many single-item calls side by side, for the batch calls (claims, heartbeats). DynamoDB has
 * no multi-item conditional write that lets one item fail its condition while the others apply
 * ({@code TransactWriteItems} is all or nothing, {@code BatchWriteItem} takes no conditions), so
 * each item keeps its own conditional request: a batch of up to {@code concurrency} items costs
 * about one round trip, a larger one a round trip per {@code concurrency} items.
 *
 * <p>Blocking batches ({@link #map}) run their calls through the sync client on a pool of the
 * store's own, shared by every caller, so {@code concurrency} bounds the store's batch requests in
 * flight whatever the number of calling threads; its threads end after a minute idle. Asynchronous
 * batches ({@link #mapAsync}) send through the async client, no thread waiting, at most {@code
 * concurrency} in flight per batch. Both run the same window ({@link Batch}).
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
   * Runs the blocking {@code call} on every item, on the store's pool, and returns the answers in
   * the items' order; all or nothing, as {@link #mapAsync}, with a blocking {@code undo} run on the
   * pool too.
   *
   * <p>The caller's wait is not cut short by an interrupt (the requests run on, and their outcome
   * is the answer), and is bounded: twice the call timeout (an item may need two calls) per {@code
   * concurrency} items and one more, as a backstop should a call outlive its own timeout. A batch
   * that answers only after the backstop gave up on it is undone when it answers.
   */
  <T, R> List<R> map(String operation, List<T> items, Function<T, R> call, BiConsumer<T, R> undo) {
    CompletableFuture<List<R>> answers =
        mapAsync(
            operation,
            items,
            item -> CompletableFuture.supplyAsync(() -> call.apply(item), pool),
            (item, answer) -> CompletableFuture.runAsync(() -> undo.accept(item, answer), pool));
    long waves = (items.size() + (long) concurrency - 1) / concurrency;
    Duration bound = callTimeout.multipliedBy(2 * (waves + 1));
    try {
      // join() waits through an interrupt and sets the flag again when it returns. The bound is
      // put on a copy: the batch must still be able to complete the answers, to be undone.
      return answers.copy().orTimeout(bound.toNanos(), TimeUnit.NANOSECONDS).join();
    } catch (CompletionException e) {
      Throwable cause = unwrap(e);
      if (cause instanceof TimeoutException) {
        undoLate(items, answers, undo);
        throw new StoreUnavailableException(
            operation + " of " + items.size() + " items did not finish within " + bound, cause);
      }
      if (cause instanceof Error error) {
        throw error;
      }
      throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
    }
  }

  /**
   * Starts {@code call} on every item, at most {@code concurrency} of this batch at once, and
   * completes with the answers in the items' order.
   *
   * <p>The first call that fails stops the calls not started yet, and the batch fails: once the
   * started calls have ended, {@code undo} is applied to every answer there was (with its item),
   * and the stage completes exceptionally (a {@link StoreUnavailableException} wrapped in one that
   * says which batch, anything else as it is), after the undos. So a batch either answers every
   * item or leaves nothing behind that {@code undo} can take back.
   */
  <T, R> CompletableFuture<List<R>> mapAsync(
      String operation,
      List<T> items,
      Function<T, CompletionStage<R>> call,
      BiFunction<T, R, CompletionStage<?>> undo) {
    Batch<T, R> batch = new Batch<>(operation, items, call, undo);
    batch.launch();
    return batch.answers;
  }

  /** Stops the threads once the calls already started are done; later batches are refused. */
  @Override
  public void close() {
    pool.shutdown();
  }

  /**
   * One batch's window: starts a call whenever fewer than {@code concurrency} are under way and no
   * call has failed; finishes once every started call has ended and none is left to start (or one
   * failed). Its state changes under its own lock: calls end on the SDK's or the pool's threads.
   */
  private final class Batch<T, R> {
    private final String operation;
    private final List<T> items;
    private final Function<T, CompletionStage<R>> call;
    private final BiFunction<T, R, CompletionStage<?>> undo;
    private final Object[] answered;
    private final boolean[] ok;
    final CompletableFuture<List<R>> answers = new CompletableFuture<>();

    // Guarded by this.
    private int next;
    private int underWay;
    private @Nullable Throwable failure;
    private boolean finished;
    private boolean launching;
    private boolean lookAgain;

    Batch(
        String operation,
        List<T> items,
        Function<T, CompletionStage<R>> call,
        BiFunction<T, R, CompletionStage<?>> undo) {
      this.operation = operation;
      this.items = List.copyOf(items);
      this.call = call;
      this.undo = undo;
      this.answered = new Object[this.items.size()];
      this.ok = new boolean[this.items.size()];
    }

    /**
     * Starts calls while the window allows; finishes the batch when nothing is left to wait for.
     * One thread at a time runs the loop: a call that ends while it runs (at once, on the starting
     * thread, for a call made on a direct executor) only asks it to look again, so that a batch of
     * calls answered at once is a loop, not a recursion as deep as the batch.
     */
    void launch() {
      synchronized (this) {
        if (launching) {
          lookAgain = true;
          return;
        }
        launching = true;
      }
      while (true) {
        int index = -1;
        boolean finishNow = false;
        synchronized (this) {
          if (failure == null && next < items.size() && underWay < concurrency) {
            index = next++;
            underWay++;
          } else if (underWay == 0 && !finished) {
            finished = true;
            finishNow = true;
          } else if (lookAgain) {
            lookAgain = false;
            continue;
          } else {
            launching = false;
            return;
          }
        }
        if (finishNow) {
          synchronized (this) {
            launching = false;
          }
          finish();
          return;
        }
        start(index);
      }
    }

    private void start(int index) {
      CompletionStage<R> stage;
      try {
        stage = call.apply(items.get(index));
      } catch (RejectedExecutionException e) {
        stage = CompletableFuture.failedFuture(new IllegalStateException("the store is closed", e));
      } catch (RuntimeException | Error e) {
        stage = CompletableFuture.failedFuture(e);
      }
      stage.whenComplete(
          (answer, failed) -> {
            synchronized (this) {
              underWay--;
              if (failed == null) {
                answered[index] = answer;
                ok[index] = true;
              } else if (failure == null) {
                failure = unwrap(failed);
              }
            }
            launch();
          });
    }

    /** Completes the answers, or undoes them and fails; called once, with nothing under way. */
    @SuppressWarnings("unchecked")
    private void finish() {
      Throwable failed;
      synchronized (this) {
        failed = failure;
      }
      if (failed == null) {
        List<R> all = new ArrayList<>(items.size());
        for (Object a : answered) {
          all.add((R) a);
        }
        answers.complete(all);
        return;
      }
      Throwable thrown =
          failed instanceof Error ? failed : translate(operation, items.size(), failed);
      List<CompletableFuture<?>> undos = new ArrayList<>();
      for (int i = 0; i < items.size(); i++) {
        if (ok[i]) {
          CompletableFuture<?> undone;
          try {
            undone = undo.apply(items.get(i), (R) answered[i]).toCompletableFuture();
          } catch (RuntimeException e) {
            undone = CompletableFuture.failedFuture(e);
          }
          undos.add(
              undone.handle(
                  (done, undoFailure) -> {
                    if (undoFailure != null) {
                      thrown.addSuppressed(unwrap(undoFailure)); // synchronized by Throwable
                    }
                    return null;
                  }));
        }
      }
      CompletableFuture.allOf(undos.toArray(CompletableFuture<?>[]::new))
          .whenComplete((done, never) -> answers.completeExceptionally(thrown));
    }
  }

  /**
   * Undoes the answers of a batch whose caller stopped waiting for it (the backstop), once they
   * arrive: the caller was told the batch failed, so nobody will use them. (A batch that fails
   * undoes its own.)
   */
  private static <T, R> void undoLate(
      List<T> items, CompletableFuture<List<R>> answers, BiConsumer<T, R> undo) {
    answers.thenAccept(
        late -> {
          for (int i = 0; i < late.size(); i++) {
            try {
              undo.accept(items.get(i), late.get(i));
            } catch (RuntimeException e) {
              log.warn("Could not undo a late answer of a failed batch; it ends with its lease", e);
            }
          }
        });
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
}

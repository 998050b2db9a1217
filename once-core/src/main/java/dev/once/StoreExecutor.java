package dev.once;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's own pool for the asynchronous calls of blocking stores: fixed size, daemon threads,
 * a bounded queue. When it is full it refuses, and the store call is answered as unavailable (503
 * on HTTP) rather than queued without end behind a store that has stopped answering.
 */
final class StoreExecutor {

  static final int QUEUE_PER_THREAD = 256;

  /**
   * The fewest calls the queue holds, however few the threads: a pool as small as the machine's
   * cores, right where the calls never hold a thread (the embedded store's answers, whose
   * continuations only start non-blocking work), must still take the burst the default pool takes:
   * a batch of answers committed together is handed over at once, and a refusal there answers a
   * request whose claim is already durable.
   */
  static final int MIN_QUEUE = Once.Builder.DEFAULT_STORE_THREADS * QUEUE_PER_THREAD;

  private StoreExecutor() {}

  static ExecutorService create(int threads) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(queueCapacity(threads)),
            r -> {
              Thread t = new Thread(r, "once-store-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    // Idle threads end, so an engine used only through the blocking API keeps none.
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * How many calls wait for a thread at most: {@value #QUEUE_PER_THREAD} a thread, never fewer than
   * {@link #MIN_QUEUE}.
   */
  static int queueCapacity(int threads) {
    return Math.max(MIN_QUEUE, threads * QUEUE_PER_THREAD);
  }
}

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

  private StoreExecutor() {}

  static ExecutorService create(int threads) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(threads * QUEUE_PER_THREAD),
            r -> {
              Thread t = new Thread(r, "once-store-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    // Idle threads end, so an engine used only through the blocking API keeps none.
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}

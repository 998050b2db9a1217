package dev.once;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the finishing writes of admitted leases run: on the engine's store executor, or, when it
 * refuses (its queue is full behind a slow store, or {@link Once#close()} shut it down), on a
 * thread of their own. A claim is refused when no thread is free, and that is safe: nothing ran. A
 * finishing write refused the same way would leave work that did run to be run again once its lease
 * ended, so it is never refused. The extra threads are bounded by the leases the engine admitted.
 */
final class FinishingExecutor implements Executor {

  private static final AtomicInteger COUNT = new AtomicInteger();

  private final Executor pool;

  FinishingExecutor(Executor pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable write) {
    try {
      pool.execute(write);
    } catch (RejectedExecutionException full) {
      Thread own = new Thread(write, "once-finish-" + COUNT.incrementAndGet());
      own.setDaemon(true);
      own.start();
    }
  }
}

package dev.once.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Runs a retry later without holding a thread while it waits. Tests replace it to skip the wait.
 */
@FunctionalInterface
interface Scheduler {

  void schedule(Duration delay, Runnable task);

  /**
   * The default: a {@link CompletableFuture#delayedExecutor} that hands the task to {@code
   * executor}.
   */
  static Scheduler on(Executor executor) {
    return (delay, task) -> {
      if (delay.isZero()) {
        executor.execute(task);
      } else {
        CompletableFuture.delayedExecutor(delay.toNanos(), TimeUnit.NANOSECONDS, executor)
            .execute(task);
      }
    };
  }
}

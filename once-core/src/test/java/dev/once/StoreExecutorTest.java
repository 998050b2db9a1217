package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link StoreExecutor}: bounded, and never bounded tighter than the default pool. */
@Timeout(30)
class StoreExecutorTest {

  /**
   * Fills {@code pool}'s threads with calls that wait for {@code gate}; returns how many queued.
   */
  private static int queuedUntilRefused(ExecutorService pool, int threads, CountDownLatch gate)
      throws InterruptedException {
    CountDownLatch busy = new CountDownLatch(threads);
    for (int i = 0; i < threads; i++) {
      pool.execute(
          () -> {
            busy.countDown();
            try {
              gate.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
    }
    assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
    int queued = 0;
    // Bounded: the largest queue any pool here may have, and one more.
    int most = StoreExecutor.queueCapacity(threads) + 1;
    try {
      for (; queued < most; queued++) {
        pool.execute(() -> {});
      }
    } catch (RejectedExecutionException refused) {
      return queued;
    }
    return queued;
  }

  @Test
  void aPoolAsSmallAsTheCoresStillTakesTheBurstTheDefaultPoolTakes() throws Exception {
    ExecutorService pool = StoreExecutor.create(2);
    CountDownLatch gate = new CountDownLatch(1);
    try {
      assertThat(queuedUntilRefused(pool, 2, gate))
          .isEqualTo(Once.Builder.DEFAULT_STORE_THREADS * StoreExecutor.QUEUE_PER_THREAD);
    } finally {
      gate.countDown();
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void aLargerPoolQueuesItsShareForEachThreadAndRefusesBeyondIt() throws Exception {
    int threads = 32;
    ExecutorService pool = StoreExecutor.create(threads);
    CountDownLatch gate = new CountDownLatch(1);
    try {
      assertThat(queuedUntilRefused(pool, threads, gate))
          .isEqualTo(threads * StoreExecutor.QUEUE_PER_THREAD);
      assertThatThrownBy(() -> pool.execute(() -> {}))
          .isInstanceOf(RejectedExecutionException.class);
    } finally {
      gate.countDown();
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void everyQueuedCallRunsOnceTheThreadsAreFree() throws Exception {
    ExecutorService pool = StoreExecutor.create(1);
    AtomicInteger ran = new AtomicInteger();
    CountDownLatch gate = new CountDownLatch(1);
    CountDownLatch all = new CountDownLatch(StoreExecutor.MIN_QUEUE);
    try {
      pool.execute(
          () -> {
            try {
              gate.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      for (int i = 0; i < StoreExecutor.MIN_QUEUE; i++) {
        pool.execute(
            () -> {
              ran.incrementAndGet();
              all.countDown();
            });
      }
      gate.countDown();
      assertThat(all.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(ran).hasValue(StoreExecutor.MIN_QUEUE);
    } finally {
      gate.countDown();
      pool.shutdown();
    }
  }
}

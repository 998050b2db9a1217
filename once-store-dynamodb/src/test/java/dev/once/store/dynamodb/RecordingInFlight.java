package dev.once.store.dynamodb;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;

/**
 * Records how many requests a client has in flight at once. Armed with {@link #gather(int)}, it
 * holds each request until that many are in flight together, so that requests sent at once are seen
 * together however the threads are scheduled; requests sent one after another never get there, and
 * the first gives up after a bound and lets every later one through at once.
 */
final class RecordingInFlight implements ExecutionInterceptor {

  private static final long GIVE_UP_SECONDS = 10;

  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger most = new AtomicInteger();
  private final AtomicInteger sent = new AtomicInteger();
  private volatile CountDownLatch together = new CountDownLatch(0);

  /** Starts counting afresh, holding requests until {@code requests} are in flight together. */
  void gather(int requests) {
    most.set(0);
    sent.set(0);
    together = new CountDownLatch(requests);
  }

  /** The most requests that were in flight at once since {@link #gather}. */
  int most() {
    return most.get();
  }

  /** The requests sent since {@link #gather}. */
  int sent() {
    return sent.get();
  }

  @Override
  public void beforeTransmission(
      Context.BeforeTransmission context, ExecutionAttributes attributes) {
    sent.incrementAndGet();
    most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
    CountDownLatch latch = together;
    latch.countDown();
    try {
      if (!latch.await(GIVE_UP_SECONDS, TimeUnit.SECONDS)) {
        while (latch.getCount() > 0) {
          latch.countDown();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
    inFlight.decrementAndGet();
  }
}

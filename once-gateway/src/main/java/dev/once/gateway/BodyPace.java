package dev.once.gateway;

import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The pace a request body streaming upstream must keep: a grace period ({@code
 * request-body-timeout}), plus one second for every {@code min-request-data-rate} bytes the client
 * has sent, counted only while the gateway waits for the client (Apache's {@code mod_reqtimeout}
 * works the same way). Time spent waiting for the upstream to take the bytes already read is not
 * the client's: a slow upstream never makes an honest upload "too slow".
 *
 * <p>A body that falls behind is cut: {@code tooSlow} runs once, on the scheduler's thread. A timer
 * is set only while the gateway waits for bytes, and cancelled when they come.
 */
final class BodyPace {

  private static final long NANOS_PER_SECOND = TimeUnit.SECONDS.toNanos(1);

  private final Scheduler scheduler;
  private final long graceNanos;
  private final long bytesPerSecond;
  private final Runnable tooSlow;

  // Guarded by this.
  private long bytes;
  private long waitedNanos;
  private long waitingSince;
  private boolean waiting;
  private Scheduler.@Nullable Task timer;
  private boolean over;

  /** {@code bytesPerSecond} must be positive; a gateway configured with 0 keeps no pace. */
  BodyPace(Scheduler scheduler, long graceNanos, long bytesPerSecond, Runnable tooSlow) {
    this.scheduler = scheduler;
    this.graceNanos = graceNanos;
    this.bytesPerSecond = bytesPerSecond;
    this.tooSlow = tooSlow;
  }

  /** Counts bytes the client sent. */
  synchronized void read(long count) {
    bytes += count;
  }

  /**
   * The gateway is about to wait for the client: sets the timer for what is left of its allowance.
   * Returns the callback to hand to {@code demand}, which stops the clock when bytes come.
   */
  Runnable demanding(Runnable onArrival) {
    boolean late;
    synchronized (this) {
      if (over) {
        return onArrival;
      }
      waiting = true;
      waitingSince = System.nanoTime();
      long left = saturatedAdd(graceNanos, allowanceFor(bytes)) - waitedNanos;
      late = left <= 0;
      if (!late) {
        timer = scheduler.schedule(this::expired, left, TimeUnit.NANOSECONDS);
      }
    }
    if (late) {
      expired();
    }
    return () -> {
      arrived();
      onArrival.run();
    };
  }

  /** The exchange no longer reads the body (it ended, or the upstream answered): no timer. */
  synchronized void stop() {
    over = true;
    cancel();
  }

  private synchronized void arrived() {
    if (waiting) {
      waitedNanos += System.nanoTime() - waitingSince;
      waiting = false;
    }
    cancel();
  }

  private void expired() {
    synchronized (this) {
      // A timer that lost the race with the bytes it waited for, or with the end of the body.
      if (over || !waiting) {
        return;
      }
      over = true;
      timer = null;
    }
    tooSlow.run();
  }

  private void cancel() {
    Scheduler.Task set = timer;
    timer = null;
    if (set != null) {
      set.cancel();
    }
  }

  /** bytes / rate seconds in nanoseconds, without overflow for any count of bytes. */
  private long allowanceFor(long count) {
    long whole = count / bytesPerSecond;
    long part = (count % bytesPerSecond) * NANOS_PER_SECOND / bytesPerSecond;
    return saturatedAdd(TimeUnit.SECONDS.toNanos(whole), part);
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }
}

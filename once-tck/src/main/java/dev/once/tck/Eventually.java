package dev.once.tck;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition that another thread makes true, polling briefly, and fails with a message
 * naming it once the bound passes: for the few test waits that have no latch or hook to wait on (a
 * lease ending on a store's clock, a heartbeat reaching a store).
 */
public final class Eventually {

  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private Eventually() {}

  /**
   * Returns once {@code condition} holds; throws {@link AssertionError} naming {@code what} if it
   * does not within {@code within}.
   */
  public static void assertThat(String what, Duration within, BooleanSupplier condition) {
    long deadline = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline >= 0) {
        throw new AssertionError("not within " + within + ": " + what);
      }
      try {
        TimeUnit.NANOSECONDS.sleep(POLL_NANOS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting until " + what, e);
      }
    }
  }
}

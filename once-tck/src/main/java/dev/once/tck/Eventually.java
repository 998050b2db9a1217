package dev.once.tck;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits for a condition that another thread makes true, polling briefly, and fails with a message
 * naming it once the bound passes: for the few test waits that have no latch or hook to wait on (a
 * lease ending on a store's clock, a heartbeat reaching a store, a client reconnecting).
 */
public final class Eventually {

  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  /**
   * Between attempts at a store call: a reconnecting client is not hurried by being asked more
   * often.
   */
  private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

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
      pause(POLL_NANOS, what);
    }
  }

  /**
   * Returns what {@code operation} returns once it stops throwing {@link StoreUnavailableException}
   * (a store whose client reconnects in the background); if it still throws after {@code within},
   * throws {@link AssertionError} naming {@code what}, with the last failure as its cause.
   */
  public static <T> T available(String what, Duration within, Supplier<T> operation) {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      try {
        return operation.get();
      } catch (StoreUnavailableException e) {
        if (System.nanoTime() - deadline >= 0) {
          throw new AssertionError("still unavailable after " + within + ": " + what, e);
        }
      }
      pause(RETRY_NANOS, what);
    }
  }

  private static void pause(long nanos, String what) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting until " + what, e);
    }
  }
}

package dev.once;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One store call as a {@link OnceListener} observes it. The engine opens it ({@link
 * OnceListener#storeCall}) on the thread that makes the call, just before the call; marks it {@link
 * #sent} on that thread once the call is made (a blocking call answered, an asynchronous one was
 * sent); and {@link #ended ends} it when the answer arrives, on whichever thread learns it. Between
 * the opening and {@link #sent}, a tracer can make it current on the calling thread, so that the
 * spans the store's client opens (JDBC, Lettuce) go beneath it; a call a blocking store makes on
 * its executor runs {@link #within} it.
 *
 * <p>Called synchronously: keep it fast. What it throws is logged and ignored; a store call never
 * fails because of it.
 */
@FunctionalInterface
public interface StoreCall {

  /**
   * The call is made: give the calling thread back its context. Called once, before {@link #ended}.
   */
  default void sent() {}

  /** The call answered, or failed with {@code failure}. Called once. */
  void ended(@Nullable Throwable failure);

  /**
   * {@code task}, which makes this call on another thread (a blocking store's executor), made to
   * run in this observation's context; by default {@code task} itself.
   */
  default Runnable within(Runnable task) {
    return task;
  }

  /** All of these, opened in this order and sent in the reverse order, as nested scopes are. */
  static StoreCall all(List<StoreCall> calls) {
    List<StoreCall> each = List.copyOf(calls);
    return new StoreCall() {
      @Override
      public void sent() {
        for (int i = each.size() - 1; i >= 0; i--) {
          each.get(i).sent();
        }
      }

      @Override
      public void ended(@Nullable Throwable failure) {
        for (StoreCall call : each) {
          call.ended(failure);
        }
      }

      @Override
      public Runnable within(Runnable task) {
        Runnable wrapped = task;
        for (int i = each.size() - 1; i >= 0; i--) {
          wrapped = each.get(i).within(wrapped);
        }
        return wrapped;
      }
    };
  }
}

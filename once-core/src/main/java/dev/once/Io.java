package dev.once;

import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * One call a {@link Step} makes, in the form each driver needs: blocking the calling thread, or
 * answering with a stage. The two forms are the same call through two doors of one client (a
 * store's {@code claim} and {@code claimAsync}); they carry no rule.
 *
 * @param blocking makes the call on this thread and returns its answer
 * @param async starts the call and returns the stage of its answer
 */
record Io<A>(Blocking<A> blocking, Supplier<CompletionStage<A>> async) {

  /** A call with a blocking form only: the user's work given to {@link Once#execute}. */
  static <A> Io<A> blockingOnly(Blocking<A> blocking) {
    return new Io<>(
        blocking,
        () -> {
          throw new IllegalStateException("a blocking call was started asynchronously");
        });
  }

  /** A call with an asynchronous form only: the user's work given to {@link Once#executeAsync}. */
  static <A> Io<A> asyncOnly(Supplier<CompletionStage<A>> async) {
    return new Io<>(
        () -> {
          throw new IllegalStateException("an asynchronous call was made blocking");
        },
        async);
  }

  /** The blocking form; may throw anything, as the user's work may. */
  @FunctionalInterface
  interface Blocking<A> {
    A call() throws Throwable;
  }
}

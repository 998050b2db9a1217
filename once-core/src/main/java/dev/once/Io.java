package dev.once;

import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * One call a {@link Step} makes, in the form each driver needs: blocking the calling thread, or
 * answering with a stage. The two forms are the same call through two doors of one client (a
 * store's {@code claim} and {@code claimAsync}); they carry no rule.
 */
interface Io<A> {

  /** Makes the call on this thread and returns its answer; may throw anything, as work may. */
  A block() throws Throwable;

  /** Starts the call and returns the stage of its answer. */
  CompletionStage<A> start();

  /** The call made of these two forms. */
  static <A> Io<A> of(Blocking<A> blocking, Supplier<CompletionStage<A>> async) {
    return new Io<>() {
      @Override
      public A block() throws Throwable {
        return blocking.call();
      }

      @Override
      public CompletionStage<A> start() {
        return async.get();
      }
    };
  }

  /** The blocking form of a call. */
  @FunctionalInterface
  interface Blocking<A> {
    A call() throws Throwable;
  }
}

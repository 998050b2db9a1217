package dev.once.store;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/** How a store call becomes a stage: on a caller's executor, or at once for a store with no I/O. */
final class Stages {

  private Stages() {}

  /**
   * Runs a blocking call on {@code blocking}: its result or its exception (not wrapped) completes
   * the stage; a pool that refuses the call makes the store unavailable for this call, as a timeout
   * would.
   */
  static <T> CompletionStage<T> onExecutor(Supplier<T> call, Executor blocking) {
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      blocking.execute(() -> complete(result, call));
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(
          new StoreUnavailableException("no thread free to call the store: " + e.getMessage(), e));
    }
    return result;
  }

  /** Runs a call that never waits for I/O on the caller's thread. */
  static <T> CompletionStage<T> now(Supplier<T> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    complete(result, call);
    return result;
  }

  private static <T> void complete(CompletableFuture<T> result, Supplier<T> call) {
    try {
      result.complete(call.get());
    } catch (RuntimeException | Error e) {
      result.completeExceptionally(e);
    }
  }
}

package dev.once.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** The store's answers, as Monos that continue where the filter's work belongs. */
final class Stages {

  private Stages() {}

  /**
   * The stage's outcome, continuing on the current thread if it is already known (an in-memory
   * store answers at once), else on Reactor's parallel scheduler. Never on the thread that
   * completed it: that is a store client's event loop (Lettuce) or the engine's bounded store
   * executor, and the handler and the writes that follow must not hold either.
   */
  static <T> Mono<T> resume(CompletionStage<T> stage) {
    CompletableFuture<T> future = stage.toCompletableFuture();
    Mono<T> outcome = Mono.fromCompletionStage(future);
    return future.isDone() ? outcome : outcome.publishOn(Schedulers.parallel());
  }
}

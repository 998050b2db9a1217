package dev.once.spring;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The Reactor side of {@link Idempotent} methods that return a {@link Mono}; loaded only for such
 * methods, so reactor-core stays optional.
 */
final class ReactorCalls {

  private ReactorCalls() {}

  /**
   * A Mono that makes the call when subscribed, once per subscription. A subscriber that cancels
   * does not stop a call that was admitted: it runs to its end and is recorded, so a retry replays
   * it instead of running it again.
   */
  static Mono<Object> mono(Supplier<CompletableFuture<@Nullable Object>> call) {
    return Mono.defer(() -> Mono.fromFuture(call.get(), true));
  }

  /** The method's Mono as a stage: subscribes to it; an empty Mono completes with null. */
  @SuppressWarnings("unchecked")
  static CompletionStage<@Nullable Object> toStage(@Nullable Object mono) {
    if (mono == null) {
      throw new NullPointerException("the method returned null instead of a Mono");
    }
    return ((Mono<@Nullable Object>) mono).toFuture();
  }
}

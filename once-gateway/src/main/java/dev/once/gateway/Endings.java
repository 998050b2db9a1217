package dev.once.gateway;

import dev.once.Outcome;
import dev.once.Recording;
import dev.once.http.Exchange;
import dev.once.http.StoredResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a guarded exchange ends, and the one place that ends it: each {@link Ending} is one of {@link
 * Exchange}'s asynchronous finishing calls, so no thread waits for the store (a Redis store answers
 * on Lettuce's thread, the embedded store on its writer; a blocking store runs on the engine's
 * store executor). {@link Exchange} reports each one to the engine's listeners ({@code
 * once_executions_total}).
 */
final class Endings {

  private static final Logger log = LoggerFactory.getLogger(Endings.class);

  /** How one guarded exchange ends. */
  @FunctionalInterface
  interface Ending extends Function<Exchange, CompletionStage<Exchange.Recorded>> {}

  /** Records the response, or releases the key if the route calls its status transient. */
  static Ending record(StoredResponse response) {
    return exchange -> exchange.recordAsync(response);
  }

  /**
   * Done with a response that was streamed and not kept; a transient status still releases the key.
   */
  static Ending streamed(int status) {
    return exchange -> exchange.recordUnavailableAsync(status);
  }

  /**
   * Done, but its response is lost (the client went away, or it cannot be delivered): never
   * released.
   */
  static final Ending UNAVAILABLE =
      exchange ->
          exchange
              .recordUnavailableAsync()
              .thenApply(recording -> new Exchange.Recorded(Outcome.COMPLETED, recording));

  /** Nothing reached the upstream: a retry may run it afresh. */
  static final Ending NOT_SENT =
      exchange ->
          exchange
              .failAsync()
              .thenApply(recording -> new Exchange.Recorded(Outcome.TRANSIENT, recording));

  /** The upstream may have acted: the key stays in progress until its lease ends. */
  static final Ending AMBIGUOUS =
      exchange -> {
        exchange.abandon();
        return CompletableFuture.completedFuture(
            new Exchange.Recorded(Outcome.TRANSIENT, Recording.UNKNOWN));
      };

  private Endings() {}

  /**
   * Finishes the exchange with {@code ending}, then runs {@code then}, whatever the store did (a
   * store that fails leaves the lease to end by itself, and the engine has logged why).
   */
  static void finish(Exchange exchange, Ending ending, Runnable then) {
    CompletionStage<Exchange.Recorded> finishing;
    try {
      finishing = ending.apply(exchange);
    } catch (RuntimeException e) {
      log.error("finishing the exchange of key {} threw", exchange.key(), e);
      then.run();
      return;
    }
    finishing.whenComplete(
        (recorded, failure) -> {
          try {
            if (failure != null) {
              log.error("finishing the exchange of key {} failed", exchange.key(), failure);
            }
          } finally {
            then.run();
          }
        });
  }
}

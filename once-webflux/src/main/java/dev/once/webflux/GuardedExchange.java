package dev.once.webflux;

import dev.once.Outcome;
import dev.once.http.Exchange;
import dev.once.http.Problems;
import dev.once.http.StoredResponse;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Runs the handler of one claimed request and finishes its exchange exactly once, whichever comes
 * first: the handler completing, the handler failing, or the client going away. Every path settles
 * the lease (DESIGN §2): once any byte of the response may have reached the client, the handler ran
 * and the outcome is "done, response unavailable", whatever fails afterwards; only a failure before
 * that can release the key, and only if the route's classifier calls it transient.
 *
 * <p>A streamed response is recorded before its first byte goes out, as the gateway records one: a
 * client that got the whole body may retry at once, and must learn that the response is gone (409
 * response-unavailable), not that the request still runs.
 *
 * <p>The handler runs to its end even if the client goes away before its response started, as it
 * would in a servlet container: cancelling it could stop it halfway through its effect, leaving an
 * outcome nobody knows. Its response is recorded, so the client's retry gets it. A client that goes
 * away while the response streams cuts it short: the handler did its work, so it counts as done.
 */
final class GuardedExchange {

  private static final Logger log = LoggerFactory.getLogger(GuardedExchange.class);

  private final Exchange exchange;
  private final CapturingResponse response;
  private final ServerWebExchange web;
  private final AtomicBoolean finished = new AtomicBoolean();

  GuardedExchange(Exchange exchange, CapturingResponse response, ServerWebExchange web) {
    this.exchange = exchange;
    this.response = response;
    this.web = web;
    response.beforeStreaming(this::streamingStarts);
  }

  /**
   * The response starts to stream: its status is final, and it can never be captured. Its first
   * byte waits for the record.
   */
  private Mono<Void> streamingStarts() {
    if (!finished.compareAndSet(false, true)) {
      return Mono.empty();
    }
    if (isAmbiguous()) {
      exchange.abandon();
      return Mono.empty();
    }
    return settle(exchange.recordUnavailableAsync(response.status()));
  }

  /**
   * Runs {@code handler} and finishes the exchange after it. The handler's subscription is the
   * filter's own, in the caller's context, so that cancelling the answer (the client went away)
   * does not cancel the handler.
   */
  Mono<Void> run(Mono<Void> handler) {
    return Mono.deferContextual(
        context -> {
          Sinks.Empty<Void> answered = Sinks.empty();
          Disposable work =
              handler
                  .then(Mono.defer(this::completed))
                  .onErrorResume(this::failed)
                  .contextWrite(context)
                  .subscribe(
                      null, error -> answered.tryEmitError(error), () -> answered.tryEmitEmpty());
          return answered.asMono().doOnCancel(() -> clientWentAway(work));
        });
  }

  /** The handler completed: its response is recorded, then sent. */
  private Mono<Void> completed() {
    if (!finished.compareAndSet(false, true)) {
      return Mono.empty();
    }
    if (isAmbiguous()) {
      exchange.abandon();
      return response.isStreamed() ? Mono.empty() : response.send(response.captured());
    }
    if (response.isStreamed()) {
      return settle(exchange.recordUnavailableAsync(response.status()));
    }
    StoredResponse captured;
    try {
      captured = response.captured();
    } catch (RuntimeException e) {
      // The handler returned, so its effect happened: a response we cannot even read is "done".
      return settle(exchange.recordUnavailableAsync()).then(Mono.error(e));
    }
    // A client that holds a response can count on its replay: recorded first, then sent.
    return settle(exchange.recordAsync(captured)).then(response.send(captured));
  }

  /**
   * The handler failed. An error that names its response (an {@link ErrorResponse} such as {@code
   * ResponseStatusException}) is that response, rendered as a problem and recorded as a servlet
   * filter records a {@code sendError}; any other error before a byte went out goes to the route's
   * classifier (a transient one releases the key) and then on to the application's error handling.
   */
  private Mono<Void> failed(Throwable error) {
    if (!finished.compareAndSet(false, true)) {
      return Mono.error(error);
    }
    if (isAmbiguous()) {
      exchange.abandon();
      return Mono.error(error);
    }
    if (response.isStreamed()) {
      return settle(exchange.recordUnavailableAsync()).then(Mono.error(error));
    }
    if (error instanceof ErrorResponse named && isProblemStatus(named.getStatusCode().value())) {
      StoredResponse answer =
          response.answer(
              Problems.forStatus(named.getStatusCode().value(), named.getBody().getDetail()),
              named.getHeaders());
      return Stages.resume(exchange.recordAsync(answer))
          .map(recorded -> recorded.outcome() == Outcome.TRANSIENT)
          .onErrorResume(
              e -> {
                log.error("recording the response of key {} failed", exchange.key(), e);
                return Mono.just(false);
              })
          // A transient one was not recorded: the application renders it, as a container renders
          // a transient sendError.
          .flatMap(released -> released ? Mono.<Void>error(error) : response.send(answer));
    }
    return settle(exchange.failAsync(error)).then(Mono.error(error));
  }

  private static boolean isProblemStatus(int status) {
    return status >= 400 && status <= 599;
  }

  /**
   * The client went away. If the response was streaming, part of it may have reached the client:
   * the handler ran, so it is done (recorded when streaming began, or now), and its writes are
   * stopped. Otherwise the handler runs on and is recorded.
   */
  private void clientWentAway(Disposable work) {
    if (!response.isStreamed()) {
      return;
    }
    work.dispose();
    if (finished.compareAndSet(false, true)) {
      if (isAmbiguous()) {
        exchange.abandon();
      } else {
        settle(exchange.recordUnavailableAsync()).subscribe();
      }
    }
  }

  /**
   * Waits for a finishing call without a thread waiting; a store that fails leaves the lease to end
   * by itself (the engine has logged why), and the client still gets its answer.
   */
  private Mono<Void> settle(CompletionStage<?> finishing) {
    return Stages.resume(finishing)
        .onErrorResume(
            e -> {
              log.error("finishing the exchange of key {} failed", exchange.key(), e);
              return Mono.empty();
            })
        .then();
  }

  /**
   * The handler could not tell whether its effect happened: neither record nor release ({@link
   * OnceWebFilter#OUTCOME}).
   */
  private boolean isAmbiguous() {
    return OnceWebFilter.AMBIGUOUS.equals(web.getAttribute(OnceWebFilter.OUTCOME));
  }
}

package dev.once.servlet;

import dev.once.Outcome;
import dev.once.http.Exchange;
import dev.once.http.StoredResponse;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletRequest;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes one exchange exactly once, whichever comes first: the response starting to stream, the
 * handler returning, an asynchronous cycle completing, a timeout or an error. Every path settles
 * the lease (DESIGN §2): once any byte of the response may have reached the client, the handler ran
 * and the outcome is "done, response unavailable", whatever fails afterwards; only a failure before
 * that releases the key.
 *
 * <p>A streamed response is recorded before its first byte goes out, as the gateway records one: a
 * client that got the whole body may retry at once, and must learn that the response is gone (409
 * response-unavailable), not that the request still runs.
 */
final class GuardedExchange implements AsyncListener {

  private static final Logger log = LoggerFactory.getLogger(GuardedExchange.class);

  private final Exchange exchange;
  private final ServletRequest request;
  private final CapturingResponse response;
  private final AtomicBoolean finished = new AtomicBoolean();
  private @Nullable StoredResponse captured;
  private boolean transientOutcome;

  /**
   * What the exchange was finished with when the response started to stream; {@link #record} then
   * answers it again, so that the tail of the response still goes out.
   */
  private volatile @Nullable Outcome recordedWhenStreaming;

  GuardedExchange(Exchange exchange, ServletRequest request, CapturingResponse response) {
    this.exchange = exchange;
    this.request = request;
    this.response = response;
    response.beforeStreaming(this::streamingStarts);
  }

  /** The response starts to stream: its status is final, and it can never be captured. */
  private void streamingStarts() {
    if (finished.compareAndSet(false, true)) {
      recordedWhenStreaming = finishStreamed();
    }
  }

  /**
   * Finishes the exchange of a response that streams: the handler's own verdict first (ambiguous,
   * not handled), else done without a stored response, or released if its status is transient.
   */
  private Outcome finishStreamed() {
    if (isAmbiguous()) {
      exchange.abandon();
      return Outcome.TRANSIENT;
    }
    if (isNotHandled()) {
      exchange.fail(); // no handler ran: nothing happened that a retry could repeat
      return Outcome.TRANSIENT;
    }
    return exchange.recordUnavailable(response.getStatus()).outcome();
  }

  CapturingResponse response() {
    return response;
  }

  /**
   * Records the handler's response, then sends it: a client that holds a response can count on its
   * replay.
   */
  void finish() throws IOException {
    if (record() != null) {
      send();
    }
  }

  /**
   * Records the handler's outcome, unless the exchange is already finished: then what it was
   * finished with when the response started to stream (whose tail {@link #send} lets out), or null.
   */
  @Nullable Outcome record() {
    if (!finished.compareAndSet(false, true)) {
      return recordedWhenStreaming;
    }
    if (isAmbiguous()) {
      exchange.abandon();
      captured = response.captured();
      transientOutcome = true;
      return Outcome.TRANSIENT;
    }
    if (isNotHandled()) {
      exchange.fail(); // no handler ran: nothing happened that a retry could repeat
      captured = response.captured();
      transientOutcome = true;
      return Outcome.TRANSIENT;
    }
    try {
      captured = response.captured();
    } catch (RuntimeException e) {
      // The handler returned, so its effect happened: a response we cannot even read back is
      // "done".
      exchange.recordUnavailable();
      throw e;
    }
    Outcome outcome = exchange.record(captured).outcome();
    transientOutcome = outcome == Outcome.TRANSIENT;
    return outcome;
  }

  /** Sends what {@link #record()} captured. */
  void send() throws IOException {
    if (captured == null) {
      response.finishStreaming();
    } else {
      response.commit(captured, transientOutcome);
    }
  }

  /**
   * The handler failed. If nothing went out yet, the route's classifier decides on the error (a
   * transient one releases the key); see {@link #settle}.
   */
  void fail(Throwable error) {
    settle(() -> exchange.fail(error));
  }

  /**
   * Finishes an exchange whose handler did not finish normally; from now on the container answers,
   * straight to the client. If part of the response already went out (a client that hung up
   * mid-stream is the usual cause), the exchange was finished when it started to stream: the
   * handler ran, it counts as done and is never run again. Otherwise {@code beforeAnyByteWentOut}
   * decides.
   */
  private void settle(Runnable beforeAnyByteWentOut) {
    if (!finished.compareAndSet(false, true)) {
      return;
    }
    response.discard();
    if (isAmbiguous()) {
      exchange.abandon();
    } else if (isNotHandled()) {
      exchange.fail();
    } else {
      beforeAnyByteWentOut.run();
    }
  }

  /**
   * The handler could not tell whether its effect happened: neither record nor release ({@link
   * OnceFilter#OUTCOME}).
   */
  private boolean isAmbiguous() {
    return OnceFilter.AMBIGUOUS.equals(request.getAttribute(OnceFilter.OUTCOME));
  }

  /** The framework found no handler for the request ({@link OnceFilter#NOT_HANDLED}). */
  private boolean isNotHandled() {
    return OnceFilter.NOT_HANDLED.equals(request.getAttribute(OnceFilter.OUTCOME));
  }

  @Override
  public void onComplete(AsyncEvent event) {
    if (finished.compareAndSet(false, true)) {
      // Completed behind the filter's back: through the container's own AsyncContext, or after a
      // dispatch the filter is not mapped for. The work is done but its response was not captured.
      log.warn(
          "an asynchronous response completed without OnceFilter seeing it finish; its retries get"
              + " 'response unavailable'. Map OnceFilter for ASYNC dispatches and complete the AsyncContext"
              + " that startAsync() returned.");
      exchange.recordUnavailable(response.getStatus());
    }
  }

  /**
   * The handler failed after handing work to another thread (an asynchronous cycle that timed out,
   * failed, or whose handler threw after starting it): that work may still run and have its effect,
   * so the key stays in progress until its lease ends (no more heartbeats), never released.
   */
  void failWhileWorkMayRun() {
    settle(exchange::abandon);
  }

  @Override
  public void onTimeout(AsyncEvent event) {
    failWhileWorkMayRun();
  }

  @Override
  public void onError(AsyncEvent event) {
    failWhileWorkMayRun();
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    // BufferedRequest registers this listener again on every new cycle it starts.
  }
}

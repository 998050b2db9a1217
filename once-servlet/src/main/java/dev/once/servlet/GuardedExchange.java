package dev.once.servlet;

import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import dev.once.http.Exchange;
import dev.once.http.Headers;
import dev.once.http.StoredResponse;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletRequest;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes one exchange exactly once, whichever comes first: the handler returning, an
 * asynchronous cycle completing, a timeout or an error.
 */
final class GuardedExchange implements AsyncListener {

  private static final Logger log = LoggerFactory.getLogger(GuardedExchange.class);

  private final Exchange exchange;
  private final ServletRequest request;
  private final CapturingResponse response;
  private final OutcomeClassifier<StoredResponse> classifier;
  private final AtomicBoolean finished = new AtomicBoolean();
  private StoredResponse captured;
  private boolean transientOutcome;

  GuardedExchange(Exchange exchange, ServletRequest request, CapturingResponse response,
      OutcomeClassifier<StoredResponse> classifier) {
    this.exchange = exchange;
    this.request = request;
    this.response = response;
    this.classifier = classifier;
  }

  CapturingResponse response() {
    return response;
  }

  /**
   * Records the handler's response, then sends it: a client that holds a response can count on
   * its replay.
   */
  void finish() throws IOException {
    if (record() != null) {
      send();
    }
  }

  /**
   * Records the handler's outcome, unless the exchange is already finished (then null). A streamed
   * response already went out: it only counts as done, or releases the key if its status is transient.
   */
  Outcome record() {
    if (!finished.compareAndSet(false, true)) {
      return null;
    }
    if (OnceFilter.AMBIGUOUS.equals(request.getAttribute(OnceFilter.OUTCOME))) {
      // The effect may or may not have happened: neither record nor release (OnceFilter.OUTCOME).
      exchange.abandon();
      captured = response.isStreamed() ? null : response.captured();
      transientOutcome = true;
      return Outcome.TRANSIENT;
    }
    if (response.isStreamed()) {
      int status = response.getStatus();
      exchange.recordUnavailable(status);
      return classifier.classify(new StoredResponse(status, Headers.EMPTY, null));
    }
    captured = response.captured();
    exchange.record(captured);
    Outcome outcome = classifier.classify(captured);
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

  /** The handler failed: the key is released and the container answers. */
  void fail() {
    if (finished.compareAndSet(false, true)) {
      response.discard();
      exchange.fail();
    }
  }

  @Override
  public void onComplete(AsyncEvent event) {
    if (finished.compareAndSet(false, true)) {
      // Completed behind the filter's back: through the container's own AsyncContext, or after a
      // dispatch the filter is not mapped for. The work is done but its response was not captured.
      log.warn("an asynchronous response completed without OnceFilter seeing it finish; its retries get"
          + " 'response unavailable'. Map OnceFilter for ASYNC dispatches and complete the AsyncContext"
          + " that startAsync() returned.");
      exchange.recordUnavailable(response.getStatus());
    }
  }

  @Override
  public void onTimeout(AsyncEvent event) {
    fail();
  }

  @Override
  public void onError(AsyncEvent event) {
    fail();
  }

  @Override
  public void onStartAsync(AsyncEvent event) {
    // BufferedRequest registers this listener again on every new cycle it starts.
  }
}

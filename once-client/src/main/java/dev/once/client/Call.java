package dev.once.client;

import dev.once.client.RetriesExhaustedException.Reason;
import dev.once.protocol.WireProtocol;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One logical operation: its attempts, one after the other, until an answer is final or the budget
 * is spent. Nothing blocks: each attempt is an asynchronous exchange, and the wait before the next
 * is a scheduled task. Attempts never overlap, so the plain fields are only touched by one thread
 * at a time, with a happens-before edge from one attempt's callback to the next attempt's start.
 */
final class Call<T> {

  private static final Logger log = LoggerFactory.getLogger(OnceHttpClient.class);

  private final OnceHttpClient client;
  private final HttpRequest request;
  private final HttpResponse.BodyHandler<T> handler;
  private final @Nullable String key;
  private final @Nullable String keyHeader;
  private final Retries.Mode mode;
  private final Instant deadline;
  private final CompletableFuture<OnceResponse<T>> result = new CompletableFuture<>();
  private volatile @Nullable CompletableFuture<?> exchange;

  private int attempts;
  private int lastStatus;
  private @Nullable IOException lastError;

  Call(
      OnceHttpClient client,
      HttpRequest request,
      HttpResponse.BodyHandler<T> handler,
      @Nullable String key) {
    this.client = client;
    this.request = request;
    this.handler = handler;
    this.key = key;
    this.keyHeader = key == null ? null : headerValue(key);
    this.mode = Retries.mode(request.method(), key != null);
    this.deadline = client.clock().instant().plus(client.deadline());
    // Cancelling the caller's future stops the retries and aborts the exchange under way.
    result.whenComplete(
        (r, e) -> {
          CompletableFuture<?> current = exchange;
          if (result.isCancelled() && current != null) {
            current.cancel(true);
          }
        });
  }

  CompletableFuture<OnceResponse<T>> start() {
    attempt();
    return result;
  }

  /**
   * The key as a header value: bare, as most servers expect, unless it starts with a quote, which a
   * server would read as the start of a structured-field string; then as an sf-string (RFC 8941).
   */
  static String headerValue(String key) {
    if (!key.startsWith("\"")) {
      return key;
    }
    return '"' + key.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }

  private void attempt() {
    if (result.isDone()) {
      return;
    }
    try {
      Duration left = Duration.between(client.clock().instant(), deadline);
      if (attempts > 0 && (left.isNegative() || left.isZero())) {
        giveUp(Reason.DEADLINE);
        return;
      }
      attempts++;
      CompletableFuture<HttpResponse<Reply<T>>> sent =
          client.http().sendAsync(prepare(left), new ClassifyingHandler<>(handler, mode));
      exchange = sent;
      sent.whenComplete(this::answered);
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
    }
  }

  /** The caller's request with the key, and a timeout that ends no later than the deadline. */
  private HttpRequest prepare(Duration left) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
            request, (name, value) -> !name.equalsIgnoreCase(WireProtocol.KEY_HEADER));
    if (keyHeader != null) {
      b.header(WireProtocol.KEY_HEADER, keyHeader);
    }
    Duration bound = left.isNegative() || left.isZero() ? Duration.ofMillis(1) : left;
    b.timeout(request.timeout().filter(t -> t.compareTo(bound) < 0).orElse(bound));
    return b.build();
  }

  private void answered(HttpResponse<Reply<T>> response, Throwable error) {
    try {
      if (error != null) {
        failed(unwrap(error));
        return;
      }
      Reply<T> reply = response.body();
      if (reply instanceof Reply.Body<T> body) {
        complete(response, body.value());
      } else if (reply instanceof Reply.Problem<T> problem) {
        problem(response, problem);
      } else {
        retry(response.statusCode(), null, retryAfter(response));
      }
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
    }
  }

  private void problem(HttpResponse<Reply<T>> response, Reply.Problem<T> problem) {
    switch (problem.type()) {
      case ProblemJson.IN_FLIGHT -> retry(response.statusCode(), null, retryAfter(response));
      case ProblemJson.KEY_REUSED ->
          result.completeExceptionally(new KeyReusedException(key, attempts));
      case ProblemJson.RESPONSE_UNAVAILABLE ->
          result.completeExceptionally(new ResponseUnavailableException(key, attempts));
      // The application's own problem: the caller's handler gets the bytes after all.
      default ->
          Bodies.replay(handler, response, problem.bytes())
              .whenComplete(
                  (body, e) -> {
                    if (e != null) {
                      result.completeExceptionally(unwrap(e));
                    } else {
                      complete(response, body);
                    }
                  });
    }
  }

  private void failed(Throwable error) {
    if (error instanceof IOException io && Retries.retryable(io, mode)) {
      retry(0, io, Optional.empty());
    } else {
      result.completeExceptionally(error);
    }
  }

  private void retry(int status, @Nullable IOException error, Optional<Duration> hint) {
    lastStatus = status;
    lastError = error;
    if (attempts >= client.maxAttempts()) {
      giveUp(Reason.MAX_ATTEMPTS);
      return;
    }
    Duration wait = hint.orElseGet(() -> client.backoff(attempts));
    if (!client.clock().instant().plus(wait).isBefore(deadline)) {
      giveUp(Reason.DEADLINE);
      return;
    }
    if (log.isDebugEnabled()) {
      log.debug(
          "{} {}: attempt {} ended in {}; retrying in {} ms{}",
          request.method(),
          request.uri().getPath(),
          attempts,
          status > 0 ? "HTTP " + status : String.valueOf(error),
          wait.toMillis(),
          hint.isPresent() ? " (Retry-After)" : "");
    }
    client.scheduler().schedule(wait, this::attempt);
  }

  private Optional<Duration> retryAfter(HttpResponse<?> response) {
    return RetryAfter.parse(
        response.headers().firstValue(WireProtocol.RETRY_AFTER_HEADER).orElse(null),
        client.clock().instant());
  }

  private void giveUp(Reason reason) {
    result.completeExceptionally(
        new RetriesExhaustedException(reason, key, attempts, lastStatus, lastError));
  }

  private void complete(HttpResponse<?> response, T body) {
    result.complete(new OnceResponse<>(new MappedResponse<>(response, body), key, attempts));
  }

  private static Throwable unwrap(Throwable e) {
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}

package dev.once.outbox;

import dev.once.internal.Arguments;
import dev.once.protocol.WireProtocol;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Delivers outbox messages as HTTP POSTs with the JDK {@link HttpClient}: the payload is the body,
 * the message's headers are sent as they are, and {@code Idempotency-Key} carries the derived key,
 * so an idempotent downstream (one behind Once) applies a message once however often it arrives.
 *
 * <table>
 *   <caption>How answers are classified</caption>
 *   <tr><th>answer</th><th>outcome</th></tr>
 *   <tr><td>2xx</td><td>delivered</td></tr>
 *   <tr><td>408, 409 (in flight, or a conflict that may clear), 425, 429, 5xx; a network failure or
 *       timeout</td><td>retry, not before {@code Retry-After} (seconds) if given</td></tr>
 *   <tr><td>other 4xx (400, 404, 422 …), 1xx, 3xx (redirects are not followed)</td><td>dead</td></tr>
 * </table>
 *
 * <p>A destination is an absolute {@code http}/{@code https} URI, or a path resolved against {@link
 * Builder#baseUri(URI)}. The response body is discarded, never logged.
 */
public final class HttpDelivery implements Delivery {

  private final HttpClient client;
  private final @Nullable ExecutorService executor;
  private final @Nullable URI baseUri;
  private final Duration requestTimeout;

  private HttpDelivery(Builder b) {
    this.baseUri = b.baseUri;
    this.requestTimeout = b.requestTimeout;
    if (b.client != null) {
      this.client = b.client;
      this.executor = null;
    } else {
      AtomicInteger n = new AtomicInteger();
      // A bounded pool for the client's callbacks: the JDK default is an unbounded cached pool.
      this.executor =
          Executors.newFixedThreadPool(
              b.threads,
              r -> {
                Thread t = new Thread(r, "once-outbox-http-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
              });
      this.client =
          HttpClient.newBuilder()
              .executor(executor)
              .connectTimeout(b.connectTimeout)
              .followRedirects(HttpClient.Redirect.NEVER)
              .build();
    }
  }

  /** A delivery with every option at its default, for absolute destination URIs. */
  public static HttpDelivery create() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  @Override
  public CompletableFuture<DeliveryOutcome> deliver(PendingMessage pending) {
    OutboxMessage m = pending.message();
    HttpRequest request;
    try {
      request = request(m, pending.idempotencyKey());
    } catch (IllegalArgumentException e) {
      // A destination that is no URI, or a header the JDK client refuses (Host, Content-Length …):
      // no later attempt can fix that.
      return CompletableFuture.completedFuture(
          DeliveryOutcome.dead("cannot build the request: " + e.getMessage()));
    }
    return client
        .sendAsync(request, HttpResponse.BodyHandlers.discarding())
        .handle(
            (response, failure) ->
                failure != null
                    ? DeliveryOutcome.retry(describe(failure))
                    : classify(
                        response.statusCode(),
                        response.headers().firstValue(WireProtocol.RETRY_AFTER_HEADER)));
  }

  private HttpRequest request(OutboxMessage m, String idempotencyKey) {
    URI uri = baseUri == null ? URI.create(m.destination()) : baseUri.resolve(m.destination());
    if (!uri.isAbsolute()
        || !("http".equalsIgnoreCase(uri.getScheme())
            || "https".equalsIgnoreCase(uri.getScheme()))) {
      throw new IllegalArgumentException("destination is not an http(s) URI: " + m.destination());
    }
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri)
            .timeout(requestTimeout)
            .POST(HttpRequest.BodyPublishers.ofByteArray(m.payloadUnsafe()));
    for (Map.Entry<String, String> h : m.headers().entrySet()) {
      b.header(h.getKey(), h.getValue());
    }
    if (m.headers().keySet().stream().noneMatch("Content-Type"::equalsIgnoreCase)) {
      b.header("Content-Type", "application/octet-stream");
    }
    return b.header(Outbox.IDEMPOTENCY_KEY_HEADER, idempotencyKey).build();
  }

  static DeliveryOutcome classify(int status, Optional<String> retryAfter) {
    if (status >= 200 && status < 300) {
      return DeliveryOutcome.DELIVERED;
    }
    if (status >= 500 || status == 408 || status == 409 || status == 425 || status == 429) {
      return new DeliveryOutcome.Retry(
          "HTTP " + status, retryAfter.map(HttpDelivery::seconds).orElse(Duration.ZERO));
    }
    return DeliveryOutcome.dead("HTTP " + status);
  }

  /** {@code Retry-After} in delta-seconds; an HTTP date or anything else counts as no hint. */
  private static Duration seconds(String value) {
    try {
      long s = Long.parseLong(value.strip());
      return s > 0 ? Duration.ofSeconds(Math.min(s, 86_400)) : Duration.ZERO;
    } catch (NumberFormatException e) {
      return Duration.ZERO;
    }
  }

  private static String describe(Throwable failure) {
    Throwable cause =
        failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    return cause.getClass().getSimpleName()
        + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
  }

  /** Shuts down the client's thread pool if this delivery created it. */
  @Override
  public void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }

  /** Options of an {@link HttpDelivery}. */
  public static final class Builder {

    private @Nullable URI baseUri;
    private Duration requestTimeout = Duration.ofSeconds(10);
    private Duration connectTimeout = Duration.ofSeconds(5);
    private int threads = 2;
    private @Nullable HttpClient client;

    private Builder() {}

    /** Resolves relative destinations; default none (destinations must be absolute). */
    public Builder baseUri(URI baseUri) {
      if (baseUri == null
          || !baseUri.isAbsolute()
          || !("http".equalsIgnoreCase(baseUri.getScheme())
              || "https".equalsIgnoreCase(baseUri.getScheme()))) {
        throw new IllegalArgumentException(
            "baseUri must be an absolute http(s) URI; was " + baseUri);
      }
      this.baseUri = baseUri;
      return this;
    }

    /**
     * The longest one request may take, answer included; default 10 s. Keep it below the relay's
     * deliveryTimeout.
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = Arguments.positive("requestTimeout", requestTimeout);
      return this;
    }

    /** The longest a connection may take to open; default 5 s. Ignored with {@link #client}. */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = Arguments.positive("connectTimeout", connectTimeout);
      return this;
    }

    /** Threads of the client's pool; default 2, from 1 to 64. Ignored with {@link #client}. */
    public Builder threads(int threads) {
      this.threads = Arguments.between("threads", threads, 1, 64);
      return this;
    }

    /** A client of the caller's (proxy, TLS, authentication); the delivery never closes it. */
    public Builder client(HttpClient client) {
      this.client = Arguments.present("client", client);
      return this;
    }

    public HttpDelivery build() {
      return new HttpDelivery(this);
    }
  }
}

package dev.once.client;

import dev.once.internal.Arguments;
import dev.once.internal.ExponentialBackoff;
import dev.once.internal.HttpToken;
import dev.once.internal.KeySyntax;
import dev.once.protocol.WireProtocol;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A {@link HttpClient} that makes each logical operation safe to repeat: it sends a new {@code
 * Idempotency-Key} (a {@link UuidV7}) with every request of a covered method (POST and PATCH by
 * default), and repeats the request with the <em>same</em> key after connection failures, timeouts,
 * I/O errors, 5xx, 408, 429 and a 409 "request in flight", with exponential backoff and full
 * jitter, honouring {@code Retry-After}, until an answer is final, {@code maxAttempts} requests
 * were sent or the {@code deadline} passed. A server that implements idempotency keys (a Once
 * server) then runs the operation once and replays its answer to every retry.
 *
 * <pre>{@code
 * OnceHttpClient client = OnceHttpClient.builder().maxAttempts(5).deadline(Duration.ofSeconds(30)).build();
 * OnceResponse<String> r = client.send(request, BodyHandlers.ofString());
 * r.replayed(); r.idempotencyKey(); r.attempts();
 * }</pre>
 *
 * <p>Request bodies are sent once per attempt, so their publishers must be able to publish again
 * ({@code BodyPublishers.ofString}, {@code ofByteArray}, {@code ofFile} can; {@code ofInputStream}
 * can if its supplier returns a fresh stream each time). The table of what is retried, and why, is
 * in {@code docs/client.md}. Immutable and thread-safe; one instance serves the whole application.
 */
public final class OnceHttpClient {

  private final HttpClient http;
  private final Set<String> coveredMethods;
  private final int maxAttempts;
  private final Duration deadline;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final RandomGenerator random;
  private final Clock clock;
  private final Scheduler scheduler;

  private OnceHttpClient(Builder b) {
    this.http =
        b.http != null
            ? b.http
            : HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    this.coveredMethods = b.coveredMethods;
    this.maxAttempts = b.maxAttempts;
    this.deadline = b.deadline;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.random = b.random;
    this.clock = b.clock;
    this.scheduler =
        b.scheduler != null
            ? b.scheduler
            : Scheduler.on(http.executor().orElse(ForkJoinPool.commonPool()));
  }

  /** A client over {@code http} with the defaults. */
  public static OnceHttpClient of(HttpClient http) {
    return builder(http).build();
  }

  /**
   * A builder for a client over a new {@link HttpClient} (10 s connect timeout, otherwise the JDK's
   * defaults).
   */
  public static Builder builder() {
    return new Builder(null);
  }

  /**
   * A builder for a client over {@code http}, which keeps its own settings (executor, proxy,
   * TLS...).
   */
  public static Builder builder(HttpClient http) {
    Arguments.present("httpClient", http);
    return new Builder(http);
  }

  /**
   * Sends {@code request}, with a new key if its method is covered, and retries as described above;
   * blocks the calling thread (and only it) until the final answer.
   *
   * <p>A request that already has an {@code Idempotency-Key} header keeps that key.
   *
   * @return the final answer: any 2xx or 3xx, or a 4xx other than 408 and 429, or a transient
   *     status on a call that could not be retried (see {@code docs/client.md})
   * @throws KeyReusedException the server says the key belongs to a different request (422)
   * @throws ResponseUnavailableException the operation happened, but its answer cannot be replayed
   * @throws RetriesExhaustedException no final answer within {@code maxAttempts} or the deadline
   * @throws IOException an I/O error on a request that was not safe to repeat
   * @throws InterruptedException the calling thread was interrupted; the call is abandoned
   */
  public <T> OnceResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws IOException, InterruptedException {
    return await(sendAsync(request, handler));
  }

  /**
   * As {@link #send(HttpRequest, HttpResponse.BodyHandler)}, with the caller's key, whatever the
   * method: for example one derived from a database id, so that a crashed and restarted caller
   * repeats the same operation rather than a new one.
   *
   * @throws IllegalArgumentException the key is not 1–255 printable ASCII characters, or the
   *     request carries a different one in its {@code Idempotency-Key} header
   */
  public <T> OnceResponse<T> send(
      HttpRequest request, HttpResponse.BodyHandler<T> handler, String idempotencyKey)
      throws IOException, InterruptedException {
    return await(sendAsync(request, handler, idempotencyKey));
  }

  /**
   * As {@link #send(HttpRequest, HttpResponse.BodyHandler)}, without blocking: the waits between
   * attempts are scheduled, not slept. The future fails with the exceptions {@code send} throws;
   * cancelling it stops the retries and aborts the exchange under way.
   */
  public <T> CompletableFuture<OnceResponse<T>> sendAsync(
      HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    requireArguments(request, handler);
    String key = headerKey(request);
    if (key == null && coveredMethods.contains(request.method().toUpperCase(Locale.ROOT))) {
      key = UuidV7.next().toString();
    }
    return new Call<>(this, request, handler, key).start();
  }

  /** As {@link #send(HttpRequest, HttpResponse.BodyHandler, String)}, without blocking. */
  public <T> CompletableFuture<OnceResponse<T>> sendAsync(
      HttpRequest request, HttpResponse.BodyHandler<T> handler, String idempotencyKey) {
    requireArguments(request, handler);
    String key = KeySyntax.check(idempotencyKey, IllegalArgumentException::new);
    String inHeader = headerKey(request);
    if (inHeader != null && !inHeader.equals(key)) {
      throw new IllegalArgumentException(
          "idempotencyKey differs from the request's Idempotency-Key header");
    }
    return new Call<>(this, request, handler, key).start();
  }

  /** The JDK client every request goes through. */
  public HttpClient httpClient() {
    return http;
  }

  private static void requireArguments(HttpRequest request, HttpResponse.BodyHandler<?> handler) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(handler, "handler");
  }

  private static @Nullable String headerKey(HttpRequest request) {
    return request
        .headers()
        .firstValue(WireProtocol.KEY_HEADER)
        .map(v -> KeySyntax.parseHeader(v, IllegalArgumentException::new))
        .orElse(null);
  }

  private static <T> T await(CompletableFuture<T> future) throws IOException, InterruptedException {
    try {
      return future.get();
    } catch (InterruptedException e) {
      future.cancel(true);
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IOException(cause);
    }
  }

  HttpClient http() {
    return http;
  }

  int maxAttempts() {
    return maxAttempts;
  }

  Duration deadline() {
    return deadline;
  }

  /**
   * The wait before retry {@code retry} (1 for the first) when the server named none: full jitter,
   * uniform between zero and a cap that doubles from {@code initialBackoff} up to {@code
   * maxBackoff}, so that a crowd of clients that failed together does not come back together.
   */
  Duration backoff(int retry) {
    return ExponentialBackoff.delay(
        initialBackoff, maxBackoff, 2.0, 1.0, Math.max(retry, 1), random);
  }

  RandomGenerator random() {
    return random;
  }

  Clock clock() {
    return clock;
  }

  Scheduler scheduler() {
    return scheduler;
  }

  /**
   * Options of an {@link OnceHttpClient}. Each setter rejects a bad value with an {@link
   * IllegalArgumentException} naming the option; {@link #build()} rejects contradictions with an
   * {@link IllegalStateException}.
   */
  public static final class Builder {
    private static final Duration LONGEST = Duration.ofDays(1);

    private final @Nullable HttpClient http;
    private Set<String> coveredMethods = Set.of("POST", "PATCH");
    private int maxAttempts = 5;
    private Duration deadline = Duration.ofSeconds(60);
    private Duration initialBackoff = Duration.ofMillis(200);
    private Duration maxBackoff = Duration.ofSeconds(10);
    private RandomGenerator random = () -> ThreadLocalRandom.current().nextLong();
    private Clock clock = Clock.systemUTC();
    private @Nullable Scheduler scheduler;

    private Builder(@Nullable HttpClient http) {
      this.http = http;
    }

    /**
     * The methods whose requests get a new key (default POST and PATCH; add PUT or DELETE if the
     * server covers them). No method at all is allowed: then only requests with the caller's key
     * are keyed.
     */
    public Builder coveredMethods(String... methods) {
      Arguments.present("coveredMethods", methods);
      for (String m : methods) {
        if (m == null || !HttpToken.is(m, Integer.MAX_VALUE)) {
          throw new IllegalArgumentException(
              "coveredMethods must be HTTP method tokens, was " + Arrays.toString(methods));
        }
      }
      this.coveredMethods =
          Arrays.stream(methods)
              .map(m -> m.toUpperCase(Locale.ROOT))
              .collect(Collectors.toUnmodifiableSet());
      return this;
    }

    /**
     * The most requests sent for one operation, the first included (default 5; 1 means no retry).
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = Arguments.between("maxAttempts", maxAttempts, 1, 100);
      return this;
    }

    /**
     * How long one operation may take, waits included (default 60 s). Each attempt's timeout ends
     * by then at the latest, and a wait that would end after it is not started.
     */
    public Builder deadline(Duration deadline) {
      this.deadline = Arguments.positive("deadline", deadline, LONGEST);
      return this;
    }

    /**
     * The cap of the first backoff (default 200 ms); it doubles for each retry up to {@link
     * #maxBackoff}.
     */
    public Builder initialBackoff(Duration initialBackoff) {
      this.initialBackoff = Arguments.positive("initialBackoff", initialBackoff, LONGEST);
      return this;
    }

    /**
     * The largest cap of a backoff (default 10 s). A {@code Retry-After} from the server is not
     * capped by it.
     */
    public Builder maxBackoff(Duration maxBackoff) {
      this.maxBackoff = Arguments.positive("maxBackoff", maxBackoff, LONGEST);
      return this;
    }

    /**
     * Where the jitter comes from (default {@link ThreadLocalRandom}); seed one for reproducible
     * tests.
     */
    public Builder random(RandomGenerator random) {
      this.random = Arguments.present("random", random);
      return this;
    }

    /**
     * The clock of the deadline and of {@code Retry-After} dates (default the system clock, UTC).
     */
    public Builder clock(Clock clock) {
      this.clock = Arguments.present("clock", clock);
      return this;
    }

    /** Replaces the scheduler of the waits between attempts (tests skip the waits). */
    Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * @throws IllegalStateException if {@code initialBackoff} is longer than {@code maxBackoff}
     */
    public OnceHttpClient build() {
      if (initialBackoff.compareTo(maxBackoff) > 0) {
        throw new IllegalStateException(
            "initialBackoff ("
                + initialBackoff
                + ") must not be longer than maxBackoff ("
                + maxBackoff
                + ")");
      }
      return new OnceHttpClient(this);
    }
  }
}

package dev.once.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.ExecutionPolicy;
import dev.once.InFlightPolicy;
import dev.once.Once;
import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import dev.once.http.HttpIdempotency;
import dev.once.http.ProblemType;
import dev.once.http.RoutePolicy;
import dev.once.http.StoredResponse;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.tck.Eventually;
import jakarta.servlet.DispatcherType;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumSet;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * The application under test: a {@link RecordingServlet} behind {@link OnceFilter} on Jetty, with
 * routes that exercise every policy, and a JDK {@link HttpClient} talking to it over a socket.
 */
final class GuardedApp implements AutoCloseable {

  static final String MERCHANT = "sk_merchant_1";

  /** The application's classifier with a bug: it throws on every response. */
  private static final OutcomeClassifier<StoredResponse> BROKEN_CLASSIFIER =
      new OutcomeClassifier<>() {
        @Override
        public Outcome classify(StoredResponse response) {
          throw new IllegalStateException("classifier bug");
        }
      };

  final RecordingStore store;
  final RecordingServlet app = new RecordingServlet();
  final Once once;
  final JettyServer server;
  final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  private GuardedApp(
      IdempotencyStore other,
      String contextPath,
      UnaryOperator<HttpIdempotency.Builder> extra,
      TransactionBoundary transactions)
      throws Exception {
    this(
        other,
        contextPath,
        extra,
        transactions,
        EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
  }

  private GuardedApp(
      IdempotencyStore other,
      String contextPath,
      UnaryOperator<HttpIdempotency.Builder> extra,
      TransactionBoundary transactions,
      EnumSet<DispatcherType> dispatches)
      throws Exception {
    this(other, InMemoryStore.create(), contextPath, extra, transactions, dispatches);
  }

  private GuardedApp(
      IdempotencyStore other,
      IdempotencyStore backing,
      String contextPath,
      UnaryOperator<HttpIdempotency.Builder> extra,
      TransactionBoundary transactions,
      EnumSet<DispatcherType> dispatches)
      throws Exception {
    this.store = new RecordingStore(backing);
    this.once = Once.of(other == null ? store : other);
    HttpIdempotency http =
        extra
            .apply(
                HttpIdempotency.builder(once)
                    .route("/required/**", RoutePolicy.builder().keyRequired(true).build())
                    .route(
                        "/small/**",
                        RoutePolicy.builder()
                            .maxRequestBytes(1024)
                            .execution(ExecutionPolicy.builder().maxResultBytes(4096).build())
                            .build())
                    .route(
                        "/wait/**",
                        RoutePolicy.builder()
                            .execution(
                                ExecutionPolicy.builder()
                                    .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(10)))
                                    .build())
                            .maxWaitersPerKey(256)
                            .build())
                    .route(
                        "/stamped/**", RoutePolicy.builder().excludeJsonPointer("/sent_at").build())
                    .route(
                        "/puts/**", RoutePolicy.builder().methods("POST", "PUT", "DELETE").build())
                    .route(
                        "/tx/**",
                        RoutePolicy.builder()
                            .execution(ExecutionPolicy.builder().heartbeat(false).build())
                            .build())
                    .route(
                        "/broken/**", RoutePolicy.builder().classifier(BROKEN_CLASSIFIER).build()))
            .build();
    this.server =
        JettyServer.start(
            OnceFilter.builder(http).transactions(transactions).build(),
            contextPath,
            app,
            dispatches);
  }

  static GuardedApp start() throws Exception {
    return new GuardedApp(null, "/", b -> b, TransactionBoundary.NONE);
  }

  /** Over a real store, recorded; closing the app closes it. */
  static GuardedApp on(IdempotencyStore backing) throws Exception {
    return new GuardedApp(
        null,
        backing,
        "/",
        b -> b,
        TransactionBoundary.NONE,
        EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
  }

  /**
   * With the filter mapped for REQUEST dispatches only: a misconfiguration that async handlers
   * reveal.
   */
  static GuardedApp mappedForRequestsOnly() throws Exception {
    return new GuardedApp(
        null, "/", b -> b, TransactionBoundary.NONE, EnumSet.of(DispatcherType.REQUEST));
  }

  /** With routes that run in transactions. */
  static GuardedApp with(TransactionBoundary transactions) throws Exception {
    return new GuardedApp(null, "/", b -> b, transactions);
  }

  /** Over another store, e.g. one that is down. */
  static GuardedApp over(IdempotencyStore store, UnaryOperator<HttpIdempotency.Builder> extra)
      throws Exception {
    return new GuardedApp(store, "/", extra, TransactionBoundary.NONE);
  }

  /** Under a context path: routes are matched on the path inside the application. */
  static GuardedApp at(String contextPath) throws Exception {
    return new GuardedApp(null, contextPath, b -> b, TransactionBoundary.NONE);
  }

  static String key() {
    return UUID.randomUUID().toString();
  }

  URI uri(String pathAndQuery) {
    return URI.create(server.base() + pathAndQuery);
  }

  /** A JSON POST from {@link #MERCHANT}, with the key unless it is null, and extra headers. */
  HttpRequest.Builder post(String path, String key, String json, String... headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri(path))
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    boolean apiKeyGiven = false;
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
      apiKeyGiven |= headers[i].equalsIgnoreCase("Api-Key");
    }
    if (!apiKeyGiven) {
      b.header("Api-Key", MERCHANT);
    }
    return b;
  }

  HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> postJson(String path, String key, String json, String... headers)
      throws IOException, InterruptedException {
    return send(post(path, key, json, headers));
  }

  /**
   * Sends one keyed request to {@code path} and then its retry, which must find the key still in
   * flight, the handler having run once; returns the first answer.
   */
  HttpResponse<String> firstAnswerWhileTheKeyStaysInFlight(String path)
      throws IOException, InterruptedException {
    String key = key();
    HttpResponse<String> first = postJson(path, key, "{}");
    Problem.assertProblem(postJson(path, key, "{}"), ProblemType.IN_FLIGHT);
    assertThat(app.executions(path)).as("runs of %s", path).isEqualTo(1);
    return first;
  }

  /**
   * Waits until the handler of {@code path} has started {@code n} times: its request holds the key.
   */
  void awaitExecutions(String path, int n) throws InterruptedException {
    awaitExecutions(path, n, null);
  }

  /**
   * As {@link #awaitExecutions(String, int)}, but gives up as soon as {@code first}, the request
   * expected to start the handler, has been answered without starting it, and says what it got.
   */
  void awaitExecutions(
      String path, int n, java.util.concurrent.Future<HttpResponse<String>> first) {
    Eventually.assertThat(
        path + " started " + n + " time(s)",
        Duration.ofSeconds(20),
        () -> {
          if (app.executions(path) >= n) {
            return true;
          }
          if (first != null && first.isDone() && app.executions(path) < n) {
            throw new AssertionError(
                path + " did not start: the request was answered with " + answer(first));
          }
          return false;
        });
  }

  private static String answer(java.util.concurrent.Future<HttpResponse<String>> done) {
    try {
      HttpResponse<String> r = done.get();
      return r.statusCode() + " " + r.body();
    } catch (Exception e) {
      return e.toString();
    }
  }

  @Override
  public void close() throws Exception {
    server.close();
    app.shutdown();
    once.close();
    store.close();
  }
}

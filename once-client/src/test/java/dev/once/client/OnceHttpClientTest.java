package dev.once.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.client.RetriesExhaustedException.Reason;
import dev.once.tck.Eventually;
import dev.once.tck.FakeClock;
import dev.once.tck.FaultProxy;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client against a real Once server (Jetty and the servlet filter) on loopback, with a {@link
 * FaultProxy} in between that loses answers after the server processed the request. Effects are
 * counted by the application, never taken from the client's word.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OnceHttpClientTest {

  private static OnceServer server;
  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  private FaultProxy proxy;
  private final String run = UUID.randomUUID().toString().substring(0, 8);

  @BeforeAll
  static void startServer() throws Exception {
    server = OnceServer.start();
    // Load the server's classes now, so that no test's first request is the slow one.
    HTTP.send(
        HttpRequest.newBuilder(server.uri("/warm-up/pay"))
            .POST(BodyPublishers.ofString("{}"))
            .header("Idempotency-Key", UUID.randomUUID().toString())
            .build(),
        BodyHandlers.discarding());
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @BeforeEach
  void startProxy() throws IOException {
    proxy = FaultProxy.to(server.port());
  }

  @AfterEach
  void stopProxy() throws IOException {
    proxy.close();
  }

  /** A client with short backoffs, through the proxy. */
  private static OnceHttpClient client(UnaryOperator<OnceHttpClient.Builder> options) {
    return options
        .apply(
            OnceHttpClient.builder(HTTP)
                .initialBackoff(Duration.ofMillis(10))
                .maxBackoff(Duration.ofMillis(50))
                .deadline(Duration.ofSeconds(30)))
        .build();
  }

  private static OnceHttpClient client() {
    return client(b -> b);
  }

  /** A unique path per test, so that counts never mix. */
  private String path(String prefix, String rest) {
    return prefix + "/" + run + rest;
  }

  private HttpRequest post(String path, String json) {
    return HttpRequest.newBuilder(OnceServer.uri(proxy.port(), path))
        .timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json")
        .POST(BodyPublishers.ofString(json))
        .build();
  }

  @Test
  void aResponseLostAfterProcessingIsRetriedWithTheSameKeyAndReplayedWithOneEffect()
      throws Exception {
    String path = path("", "/pay");
    proxy.dropResponses(1);

    OnceResponse<String> r =
        client().send(post(path, "{\"amount\":1250}"), BodyHandlers.ofString());

    assertThat(proxy.droppedResponses()).isEqualTo(1);
    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.replayed()).isTrue();
    assertThat(r.attempts()).isEqualTo(2);
    assertThat(r.body()).contains("\"effect\":1");
    assertThat(server.app.executions(path)).isEqualTo(1);
    String key = r.idempotencyKey().orElseThrow();
    assertThat(UUID.fromString(key).version()).isEqualTo(7);
    assertThat(server.app.lastKey(path)).isEqualTo(key);
    assertThat(r.response().request().headers().firstValue("Idempotency-Key")).contains(key);
  }

  @Test
  void asynchronouslyTwoLostResponsesAreRetriedAndReplayedWithOneEffect() throws Exception {
    String path = path("", "/pay");
    proxy.dropResponses(2);

    OnceResponse<String> r =
        client()
            .sendAsync(post(path, "{\"amount\":7}"), BodyHandlers.ofString())
            .get(30, TimeUnit.SECONDS);

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.replayed()).isTrue();
    assertThat(r.attempts()).isEqualTo(3);
    assertThat(server.app.executions(path)).isEqualTo(1);
  }

  @Test
  void eachLogicalOperationGetsItsOwnKey() throws Exception {
    String path = path("", "/pay");
    OnceHttpClient client = client();

    OnceResponse<String> first = client.send(post(path, "{\"amount\":1}"), BodyHandlers.ofString());
    OnceResponse<String> second =
        client.send(post(path, "{\"amount\":1}"), BodyHandlers.ofString());

    assertThat(first.idempotencyKey()).isNotEqualTo(second.idempotencyKey());
    assertThat(first.replayed()).isFalse();
    assertThat(second.replayed()).isFalse();
    assertThat(server.app.executions(path)).isEqualTo(2);
  }

  @Test
  void aTimedOutAttemptIsRetriedAndGetsTheReplay() throws Exception {
    String path = path("", "/pay");
    proxy.delayResponses(1, Duration.ofSeconds(3));
    HttpRequest request =
        HttpRequest.newBuilder(post(path, "{}"), (n, v) -> true)
            .timeout(Duration.ofMillis(500))
            .build();

    OnceResponse<String> r = client().send(request, BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(201);
    // Usually 2; 3 when a busy machine took longer than the timeout to run the first.
    assertThat(r.attempts()).isGreaterThanOrEqualTo(2);
    assertThat(r.replayed()).isTrue();
    assertThat(server.app.executions(path)).isEqualTo(1);
  }

  @Test
  void aDuplicateInFlightWaitsForRetryAfterAndGetsTheResult() throws Exception {
    String path = path("/slow", "/pay?ms=3000");
    String key = "order-" + run;
    CompletableFuture<OnceResponse<String>> first =
        client().sendAsync(post(path, "{\"amount\":5}"), BodyHandlers.ofString(), key);
    awaitExecutions(path.substring(0, path.indexOf('?')), 1);
    RecordingScheduler waits = RecordingScheduler.waiting();

    OnceResponse<String> second =
        client(b -> b.scheduler(waits))
            .send(post(path, "{\"amount\":5}"), BodyHandlers.ofString(), key);

    assertThat(second.statusCode()).isEqualTo(201);
    assertThat(second.replayed()).isTrue();
    assertThat(second.attempts()).isGreaterThanOrEqualTo(2);
    // The server's Retry-After (seconds left on the first's 2 s lease), not the 10-50 ms backoff.
    assertThat(waits.waits.get(0)).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThat(first.get(30, TimeUnit.SECONDS).replayed()).isFalse();
    assertThat(second.body()).isEqualTo(first.get().body());
    assertThat(server.app.executions(path.substring(0, path.indexOf('?')))).isEqualTo(1);
  }

  @Test
  void aKeyReusedWithAnotherRequestIsATypedErrorAndIsNotRetried() throws Exception {
    String path = path("", "/pay");
    String key = "order-" + run;
    OnceHttpClient client = client();
    client.send(post(path, "{\"amount\":1}"), BodyHandlers.ofString(), key);

    assertThatThrownBy(
            () -> client.send(post(path, "{\"amount\":2}"), BodyHandlers.ofString(), key))
        .isInstanceOfSatisfying(
            KeyReusedException.class,
            e -> {
              assertThat(e.attempts()).isEqualTo(1);
              assertThat(e.idempotencyKey()).contains(key);
            });
    assertThat(server.app.executions(path)).isEqualTo(1);
  }

  @Test
  void aKeyReusedAsynchronouslyFailsTheFutureWithTheTypedError() throws Exception {
    String path = path("", "/pay");
    String key = "order-" + run;
    OnceHttpClient client = client();
    client.send(post(path, "{\"amount\":1}"), BodyHandlers.ofString(), key);

    CompletableFuture<OnceResponse<String>> f =
        client.sendAsync(post(path, "{\"amount\":2}"), BodyHandlers.ofString(), key);

    assertThatThrownBy(() -> f.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(KeyReusedException.class);
  }

  @Test
  void anAnswerThatCannotBeReplayedIsATypedErrorAndIsNotRetried() throws Exception {
    String path = path("/small", "/pay");
    String key = "order-" + run;
    OnceHttpClient client = client();
    assertThat(client.send(post(path, "{}"), BodyHandlers.ofString(), key).statusCode())
        .isEqualTo(201);

    assertThatThrownBy(() -> client.send(post(path, "{}"), BodyHandlers.ofString(), key))
        .isInstanceOfSatisfying(
            ResponseUnavailableException.class, e -> assertThat(e.attempts()).isEqualTo(1));
    assertThat(server.app.executions(path)).isEqualTo(1);
  }

  @Test
  void unprocessableIsReturnedAndNotRetried() throws Exception {
    String path = path("/status/422", "");

    OnceResponse<String> r = client().send(post(path, "{}"), BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(422);
    assertThat(r.body()).isEqualTo("{\"status\":422}");
    assertThat(r.attempts()).isEqualTo(1);
    assertThat(server.app.executions(path)).isEqualTo(1);
  }

  @Test
  void otherClientErrorsAreReturnedAndNotRetried() throws Exception {
    for (int status : new int[] {400, 404, 409}) {
      String path = path("/status/" + status, "");
      OnceResponse<String> r = client().send(post(path, "{}"), BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(status);
      assertThat(r.attempts()).isEqualTo(1);
      assertThat(server.app.executions(path)).isEqualTo(1);
    }
  }

  @Test
  void theApplicationsOwnConflictProblemReachesTheCallerWithItsBody() throws Exception {
    OnceResponse<String> r =
        client().send(post("/problem409", "{\"run\":\"" + run + "\"}"), BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(409);
    assertThat(r.attempts()).isEqualTo(1);
    assertThat(r.body()).contains("https://shop.example/out-of-stock");
  }

  @Test
  void serverErrorsAreRetriedWithTheSameKeyUntilTheOperationSucceeds() throws Exception {
    String path = path("/flaky/503", "");

    OnceResponse<String> r = client().send(post(path + "?times=2", "{}"), BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.attempts()).isEqualTo(3);
    assertThat(r.replayed()).isFalse();
    // The server released the key after each 503, so each attempt ran: that is what 5xx means.
    assertThat(server.app.executions(path)).isEqualTo(3);
    assertThat(r.body()).isEqualTo("{\"run\":3}");
  }

  @Test
  void tooManyRequestsIsRetriedAfterItsRetryAfter() throws Exception {
    String path = path("/flaky/429", "");
    RecordingScheduler waits = RecordingScheduler.waiting();

    OnceResponse<String> r =
        client(b -> b.scheduler(waits))
            .send(post(path + "?times=1&ra=1", "{}"), BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.attempts()).isEqualTo(2);
    assertThat(waits.waits).containsExactly(Duration.ofSeconds(1));
  }

  @Test
  void maxAttemptsIsRespected() throws Exception {
    String path = path("/status/500", "");

    assertThatThrownBy(
            () -> client(b -> b.maxAttempts(3)).send(post(path, "{}"), BodyHandlers.ofString()))
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.MAX_ATTEMPTS);
              assertThat(e.attempts()).isEqualTo(3);
              assertThat(e.lastStatus()).hasValue(500);
              assertThat(e.idempotencyKey()).isPresent();
            });
    assertThat(server.app.executions(path)).isEqualTo(3);
  }

  @Test
  void theDeadlineEndsTheRetriesWithFullJitterBackoffBetweenThem() throws Exception {
    String path = path("/status/503", "");
    FakeClock clock = FakeClock.create();
    RecordingScheduler waits = RecordingScheduler.skipping(clock);
    // A "random" that always picks the top of the range: the waits are the caps, 1 s, 2 s, 4 s.
    OnceHttpClient client =
        OnceHttpClient.builder(HTTP)
            .clock(clock)
            .scheduler(waits)
            .random(BackoffTest.TOP)
            .maxAttempts(100)
            .deadline(Duration.ofSeconds(5))
            .initialBackoff(Duration.ofSeconds(1))
            .maxBackoff(Duration.ofSeconds(8))
            .build();

    assertThatThrownBy(() -> client.send(post(path, "{}"), BodyHandlers.ofString()))
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.DEADLINE);
              assertThat(e.attempts()).isEqualTo(3);
              assertThat(e.lastStatus()).hasValue(503);
            });
    // After 1 s and 2 s the third attempt failed at t=3 s; a wait of 4 s would pass the 5 s
    // deadline.
    assertThat(waits.waits).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThat(server.app.executions(path)).isEqualTo(3);
  }

  @Test
  void aRetryAfterBeyondTheDeadlineEndsTheCallWithoutWaiting() throws Exception {
    String path = path("/flaky/503", "");
    RecordingScheduler waits = RecordingScheduler.waiting();

    assertThatThrownBy(
            () ->
                client(b -> b.scheduler(waits).deadline(Duration.ofSeconds(10)))
                    .send(post(path + "?times=1&ra=120", "{}"), BodyHandlers.ofString()))
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.DEADLINE);
              assertThat(e.attempts()).isEqualTo(1);
            });
    assertThat(waits.waits).isEmpty();
  }

  @Test
  void aRefusedConnectionIsRetriedAndReportedWithItsCause() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    HttpRequest request =
        HttpRequest.newBuilder(OnceServer.uri(closedPort, "/pay"))
            .POST(BodyPublishers.ofString("{}"))
            .build();

    assertThatThrownBy(() -> client(b -> b.maxAttempts(3)).send(request, BodyHandlers.ofString()))
        .isInstanceOfSatisfying(
            RetriesExhaustedException.class,
            e -> {
              assertThat(e.attempts()).isEqualTo(3);
              assertThat(e.lastStatus()).isEmpty();
              assertThat(e.getCause()).isInstanceOf(ConnectException.class);
            });
  }

  @Test
  void aCallerKeyIsSentAndReusedAcrossCalls() throws Exception {
    String path = path("", "/pay");
    String key = "invoice-" + run + "-42";
    OnceHttpClient client = client();

    OnceResponse<String> first =
        client.send(post(path, "{\"amount\":1}"), BodyHandlers.ofString(), key);
    // A restarted caller derives the same key and gets the same answer.
    OnceResponse<String> again =
        client.send(post(path, "{\"amount\":1}"), BodyHandlers.ofString(), key);

    assertThat(server.app.lastKey(path)).isEqualTo(key);
    assertThat(first.idempotencyKey()).contains(key);
    assertThat(again.replayed()).isTrue();
    assertThat(again.body()).isEqualTo(first.body());
    assertThat(server.app.executions(path)).isEqualTo(1);
  }

  @Test
  void aKeyAlreadyInTheRequestHeaderIsKept() throws Exception {
    String path = path("", "/pay");
    String key = "from-header-" + run;
    HttpRequest request =
        HttpRequest.newBuilder(post(path, "{}"), (n, v) -> true)
            .header("Idempotency-Key", key)
            .build();
    proxy.dropResponses(1);

    OnceResponse<String> r = client().send(request, BodyHandlers.ofString());

    assertThat(r.idempotencyKey()).contains(key);
    assertThat(r.replayed()).isTrue();
    assertThat(server.app.lastKey(path)).isEqualTo(key);
  }

  @Test
  void aKeyThatStartsWithAQuoteIsSentAsAStructuredFieldString() throws Exception {
    String path = path("", "/pay");
    String key = "\"quoted\\" + run;

    OnceResponse<String> r = client().send(post(path, "{}"), BodyHandlers.ofString(), key);
    OnceResponse<String> again = client().send(post(path, "{}"), BodyHandlers.ofString(), key);

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(again.replayed()).isTrue();
    assertThat(server.app.lastKey(path)).isEqualTo("\"\\\"quoted\\\\" + run + "\"");
  }

  @Test
  void aGetCarriesNoKeyAndIsRetriedBecauseItIsSafe() throws Exception {
    String path = path("/flaky/503", "");
    HttpRequest get =
        HttpRequest.newBuilder(OnceServer.uri(proxy.port(), path + "?times=1")).GET().build();

    OnceResponse<String> r = client().send(get, BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.idempotencyKey()).isEmpty();
    assertThat(r.attempts()).isEqualTo(2);
    assertThat(server.app.lastKey(path)).isEmpty();
    // Not covered by the server either: both requests ran, as a GET may.
    assertThat(server.app.executions(path)).isEqualTo(2);
  }

  @Test
  void anUncoveredPostIsSentOnceAndItsErrorsPassThrough() throws Exception {
    String path = path("", "/pay");
    proxy.dropResponses(1);
    OnceHttpClient client = client(b -> b.coveredMethods());

    assertThatThrownBy(() -> client.send(post(path, "{}"), BodyHandlers.ofString()))
        .isInstanceOf(IOException.class)
        .isNotInstanceOf(OnceClientException.class);
    assertThat(server.app.executions(path)).isEqualTo(1);
    assertThat(server.app.lastKey(path)).isEmpty();
  }

  @Test
  void anUncoveredPostGetsItsTransientStatusBackUnretried() throws Exception {
    String path = path("/status/503", "");

    OnceResponse<String> r =
        client(b -> b.coveredMethods("PATCH")).send(post(path, "{}"), BodyHandlers.ofString());

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).isEqualTo("{\"status\":503}");
    assertThat(r.attempts()).isEqualTo(1);
  }

  @Test
  void cancellingTheFutureStopsTheRetries() throws Exception {
    String path = path("/status/503", "");
    RecordingScheduler held = RecordingScheduler.holding();
    CompletableFuture<OnceResponse<String>> f =
        client(b -> b.scheduler(held)).sendAsync(post(path, "{}"), BodyHandlers.ofString());
    awaitHeld(held);

    f.cancel(true);
    held.held.get(0).run();

    assertThat(f).isCancelled();
    assertThat(server.app.executions(path)).isEqualTo(1);
  }

  @Test
  void anInterruptedSendAbandonsTheCall() throws Exception {
    String path = path("/slow", "/pay?ms=3000");
    Thread caller = Thread.currentThread();
    CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS).execute(caller::interrupt);

    assertThatThrownBy(() -> client().send(post(path, "{}"), BodyHandlers.ofString()))
        .isInstanceOf(InterruptedException.class);
    Thread.interrupted();
  }

  private static void awaitHeld(RecordingScheduler scheduler) {
    Eventually.assertThat(
        "a retry was scheduled", Duration.ofSeconds(20), () -> !scheduler.held.isEmpty());
  }

  private static void awaitExecutions(String path, int n) {
    Eventually.assertThat(
        path + " started " + n + " time(s)",
        Duration.ofSeconds(20),
        () -> server.app.executions(path) >= n);
  }
}

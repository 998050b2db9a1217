package dev.once.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.Exchange;
import dev.once.http.HttpIdempotency;
import dev.once.http.ProblemType;
import dev.once.http.RouteOptions;
import dev.once.http.RoutePolicy;
import dev.once.store.InMemoryStore;
import dev.once.tck.Eventually;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * What WebFlux adds to the kit's rows: bodies written in many buffers or streamed, errors that name
 * their response, form data, an outer filter's headers, a client that goes away, and a handler that
 * cannot tell whether its effect happened.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OnceWebFilterTest {

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final CountDownLatch heldStarted = new CountDownLatch(1);
  private final CountDownLatch heldMayAnswer = new CountDownLatch(1);
  private final AtomicInteger requestIds = new AtomicInteger();
  private Once once;
  private WebFluxServer server;

  @BeforeAll
  void start() {
    once = Once.of(InMemoryStore.create());
    HttpIdempotency http =
        HttpIdempotency.builder(once)
            .route(
                "/small/**",
                RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("max-response-bytes", 1024)))
            .build();
    WebFilter requestId =
        (exchange, chain) -> {
          exchange
              .getResponse()
              .getHeaders()
              .set("X-Request-Id", "r" + requestIds.incrementAndGet());
          return chain.filter(exchange);
        };
    server = WebFluxServer.start(this::handle, requestId, OnceWebFilter.of(http));
  }

  @AfterAll
  void stop() {
    server.close();
    once.close();
  }

  private Mono<Void> handle(ServerWebExchange exchange) {
    String path = exchange.getRequest().getPath().value();
    runs.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    ServerHttpResponse response = exchange.getResponse();
    return switch (path) {
      case "/api/events" ->
          response.writeAndFlushWith(
              Flux.just("data: 1\n\n", "data: 2\n\n").map(event -> Mono.just(buffer(event))));
      case "/small/big-then-hold" -> {
        // The whole body, with its length, reaches the client; then the handler keeps running.
        response.getHeaders().setContentLength(2000);
        yield response
            .writeWith(Flux.range(0, 20).map(i -> buffer("x".repeat(100))))
            .then(Mono.delay(Duration.ofSeconds(3)))
            .then();
      }
      case "/small/chunks" ->
          response.writeWith(
              Flux.range(0, 50)
                  .map(i -> buffer(String.valueOf((char) ('a' + i % 26)).repeat(100))));
      case "/api/missing" ->
          Mono.error(new ResponseStatusException(HttpStatus.NOT_FOUND, "no such order"));
      case "/api/unavailable" ->
          Mono.error(new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE));
      case "/api/form" ->
          exchange
              .getFormData()
              .flatMap(form -> text(response, 200, "amount=" + form.getFirst("amount")));
      case "/api/held" ->
          Mono.fromCallable(
                  () -> {
                    heldStarted.countDown();
                    return heldMayAnswer.await(20, TimeUnit.SECONDS);
                  })
              .subscribeOn(Schedulers.boundedElastic())
              .flatMap(released -> text(response, 201, "held " + released));
      case "/api/ambiguous" -> {
        Exchange lease = exchange.getRequiredAttribute(OnceWebFilter.EXCHANGE);
        exchange.getAttributes().put(OnceWebFilter.OUTCOME, OnceWebFilter.AMBIGUOUS);
        yield text(response, 504, "upstream timed out; token " + lease.token());
      }
      default -> text(response, 201, "created " + runs(path));
    };
  }

  @Test
  void aBodyWrittenInManyBuffersPastTheCapIsDeliveredWholeAndCountsAsDone() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/small/chunks", key, "{}"));
    HttpResponse<String> retry = send(post("/small/chunks", key, "{}"));

    StringBuilder expected = new StringBuilder();
    for (int i = 0; i < 50; i++) {
      expected.append(String.valueOf((char) ('a' + i % 26)).repeat(100));
    }
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).isEqualTo(expected.toString());
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(runs("/small/chunks")).isEqualTo(1);
  }

  /**
   * A response over the cap streams, and is recorded before its first byte goes out: a client that
   * got the whole body and retries while the handler still runs learns that the response is gone,
   * not that the request is in flight.
   */
  @Test
  void aStreamedResponseIsRecordedBeforeItsFirstByteSoARetryWhileTheHandlerRunsIsUnavailable() {
    String key = key();

    HttpResponse<String> first = send(post("/small/big-then-hold", key, "{}"));
    // On a connection of its own, answered while the handler still runs.
    HttpResponse<String> retry;
    try {
      retry =
          HttpClient.newHttpClient()
              .send(
                  post("/small/big-then-hold", key, "{}").build(),
                  HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(2000);
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(runs("/small/big-then-hold")).isEqualTo(1);
  }

  @Test
  void aStreamedResponseIsDeliveredAndCountsAsDone() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/events", key, "{}"));
    HttpResponse<String> retry = send(post("/api/events", key, "{}"));

    assertThat(first.body()).isEqualTo("data: 1\n\ndata: 2\n\n");
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(runs("/api/events")).isEqualTo(1);
  }

  @Test
  void anErrorNamingAClientErrorIsAProblemRecordedAndReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/missing", key, "{}"));
    HttpResponse<String> retry = send(post("/api/missing", key, "{}"));

    assertThat(first.statusCode()).isEqualTo(404);
    assertThat(first.headers().firstValue("Content-Type")).contains("application/problem+json");
    assertThat(first.body()).contains("\"detail\":\"no such order\"");
    assertThat(retry.statusCode()).isEqualTo(404);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(runs("/api/missing")).isEqualTo(1);
  }

  @Test
  void anErrorNamingATransientStatusReleasesTheKey() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/unavailable", key, "{}"));
    HttpResponse<String> retry = send(post("/api/unavailable", key, "{}"));

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(retry.statusCode()).isEqualTo(503);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(runs("/api/unavailable")).isEqualTo(2);
  }

  @Test
  void theHandlerReadsFormDataFromTheBodyTheFilterRead() throws Exception {
    String key = key();
    HttpRequest.Builder form =
        request("/api/form", key)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString("amount=1000&currency=EUR"));

    HttpResponse<String> first = send(form);
    HttpResponse<String> retry = send(form);

    assertThat(first.body()).isEqualTo("amount=1000");
    assertThat(retry.body()).isEqualTo("amount=1000");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void anOuterFiltersHeadersAreTheRetrysOwn() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/outer", key, "{}"));
    HttpResponse<String> retry = send(post("/api/outer", key, "{}"));

    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(retry.headers().allValues("X-Request-Id"))
        .singleElement()
        .isNotEqualTo(first.headers().firstValue("X-Request-Id").orElseThrow());
  }

  @Test
  void aClientThatGoesAwayBeforeItsResponseGetsItOnItsRetry() throws Exception {
    String key = key();
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /api/held HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: "
                  + key
                  + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(heldStarted.await(20, TimeUnit.SECONDS)).as("the handler started").isTrue();
    }
    heldMayAnswer.countDown();

    Eventually.assertThat(
        "the response of the request whose client went away is replayed",
        Duration.ofSeconds(20),
        () ->
            send(post("/api/held", key, "{}"))
                .headers()
                .firstValue("Idempotent-Replayed")
                .isPresent());
    HttpResponse<String> retry = send(post("/api/held", key, "{}"));
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo("held true");
    assertThat(runs("/api/held")).isEqualTo(1);
  }

  @Test
  void anAmbiguousOutcomeLeavesTheKeyInProgress() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/ambiguous", key, "{}"));
    HttpResponse<String> retry = send(post("/api/ambiguous", key, "{}"));

    assertThat(first.statusCode()).isEqualTo(504);
    assertThat(first.body()).matches("upstream timed out; token \\d+");
    assertProblem(retry, ProblemType.IN_FLIGHT);
    assertThat(runs("/api/ambiguous")).isEqualTo(1);
  }

  // ---- helpers ----

  private static DataBuffer buffer(String text) {
    return DefaultDataBufferFactory.sharedInstance.wrap(text.getBytes(StandardCharsets.UTF_8));
  }

  private static Mono<Void> text(ServerHttpResponse response, int status, String text) {
    response.setRawStatusCode(status);
    response.getHeaders().set("Content-Type", "text/plain");
    return response.writeWith(Mono.fromSupplier(() -> buffer(text)));
  }

  private int runs(String path) {
    AtomicInteger n = runs.get(path);
    return n == null ? 0 : n.get();
  }

  private static String key() {
    return UUID.randomUUID().toString();
  }

  private HttpRequest.Builder request(String path, String key) {
    return HttpRequest.newBuilder(URI.create(server.base() + path))
        .timeout(Duration.ofSeconds(20))
        .header("Idempotency-Key", key);
  }

  private HttpRequest.Builder post(String path, String key, String json) {
    return request(path, key)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json));
  }

  private HttpResponse<String> send(HttpRequest.Builder request) {
    try {
      return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void assertProblem(HttpResponse<String> r, ProblemType type) {
    assertThat(r.statusCode()).as("status of %s", r.body()).isEqualTo(type.status());
    assertThat(r.body()).contains("\"type\":\"" + type.uri() + "\"");
  }
}

package dev.once.http.kit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.FakeUnavailableStore;
import dev.once.http.ProblemType;
import dev.once.http.Problems;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * DESIGN §4, row by row, over real sockets: the one HTTP-semantics suite that every adapter (the
 * servlet filter, the Spring starter, the gateway, and any later one) extends. A subclass says only
 * how to {@link #deploy} the {@link ReferenceApi} on {@link KitRoutes} over a given store; the kit
 * asserts what a client sees and how often the handler really ran.
 *
 * <p>Rows that need a store that is down deploy a second time over {@link FakeUnavailableStore}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class HttpSemanticsContract {

  /** The tenant every request names unless a test says otherwise. */
  protected static final String TENANT = "sk_merchant_1";

  private static final Duration SLOW = Duration.ofMillis(1500);

  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  private IdempotencyStore store;
  private Deployment app;

  /**
   * Starts the adapter serving {@code api} on {@link KitRoutes} over {@code store}, scoping keys by
   * the {@link KitRoutes#TENANT_HEADER} header. The kit closes the deployment, then the store.
   */
  protected abstract Deployment deploy(IdempotencyStore store) throws Exception;

  /** The store the suite runs on; override to run it on a real one. */
  protected IdempotencyStore store() throws Exception {
    return InMemoryStore.create();
  }

  @BeforeAll
  void deployOnce() throws Exception {
    store = store();
    app = deploy(store);
  }

  @AfterAll
  void close() throws Exception {
    try {
      if (app != null) {
        app.close();
      }
    } finally {
      if (store != null) {
        store.close();
      }
    }
  }

  // ---- concurrency never changes the answer ----

  /**
   * Identical requests for a few new keys at the same moment, mixed with requests for keys of their
   * own: each key's handler runs once, and every other copy gets that first response replayed or
   * 409 in flight. Over a store that gathers (PostgreSQL, Redis) the copies and the other keys are
   * claimed in the same batches, where two copies of one key once both won, under one token.
   */
  @Test
  void aHerdOfIdenticalRequestsRunsEachKeysHandlerOnce() throws Exception {
    int keys = 4;
    int copies = 8;
    int loners = 16;
    List<String> herd = new ArrayList<>();
    List<HttpRequest.Builder> requests = new ArrayList<>();
    for (int k = 0; k < keys; k++) {
      String path = "/api/payments/herd-" + UUID.randomUUID();
      String key = key();
      herd.add(path);
      for (int c = 0; c < copies; c++) {
        requests.add(post(path, key, "{\"amount\":1000}"));
      }
    }
    for (int i = 0; i < loners; i++) {
      requests.add(post("/api/payments/herd-loner-" + UUID.randomUUID(), key(), "{}"));
    }
    Collections.shuffle(requests, new Random(herd.hashCode()));

    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (HttpRequest.Builder r : requests) {
      sent.add(sendAsync(r));
    }
    CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

    for (String path : herd) {
      assertThat(runs(path)).as("runs of %s", path).isEqualTo(1);
      List<HttpResponse<String>> answers =
          sent.stream()
              .map(CompletableFuture::join)
              .filter(r -> r.uri().getPath().equals(path))
              .toList();
      List<HttpResponse<String>> firsts =
          answers.stream()
              .filter(
                  r ->
                      r.statusCode() == 201
                          && r.headers().firstValue("Idempotent-Replayed").isEmpty())
              .toList();
      assertThat(firsts).as("first answers of %s", path).hasSize(1);
      for (HttpResponse<String> r : answers) {
        if (r.statusCode() == 201) {
          assertThat(r.body()).isEqualTo(firsts.get(0).body());
        } else {
          assertProblem(r, ProblemType.IN_FLIGHT);
        }
      }
    }
  }

  // ---- method not covered; no key ----

  @Test
  void aMethodTheRouteDoesNotCoverIsUntouched() throws Exception {
    String key = key();
    HttpRequest.Builder get = request("/required/api/payments/get", key, null).GET();

    HttpResponse<String> first = send(get);
    HttpResponse<String> second = send(get);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(second.body()).isNotEqualTo(first.body());
    assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(runs("/required/api/payments/get")).isEqualTo(2);
  }

  @Test
  void putIsUntouchedUnlessTheRouteCoversIt() throws Exception {
    String key = key();
    HttpRequest.Builder put =
        request("/api/payments/put", key, null).PUT(HttpRequest.BodyPublishers.ofString("{}"));
    HttpRequest.Builder coveredPut =
        request("/puts/api/payments", key, null).PUT(HttpRequest.BodyPublishers.ofString("{}"));

    send(put);
    send(put);
    send(coveredPut);
    HttpResponse<String> replay = send(coveredPut);

    assertThat(runs("/api/payments/put")).isEqualTo(2);
    assertThat(runs("/puts/api/payments")).isEqualTo(1);
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void withoutAKeyAnOptionalRouteRunsEveryTimeAndRecordsNothing() throws Exception {
    send(post("/api/payments/nokey", null, "{}"));
    HttpResponse<String> second = send(post("/api/payments/nokey", null, "{}"));

    assertThat(second.statusCode()).isEqualTo(201);
    assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(runs("/api/payments/nokey")).isEqualTo(2);
  }

  @Test
  void withoutAKeyARequiredRouteIs400KeyMissingAndRunsNothing() throws Exception {
    assertProblem(send(post("/required/api/payments/nokey", null, "{}")), ProblemType.KEY_MISSING);
    assertThat(runs("/required/api/payments/nokey")).isZero();
  }

  @Test
  void aMalformedKeyIs400KeyInvalidAndRunsNothing() throws Exception {
    for (String bad : List.of("\"unterminated", "a".repeat(256), "two words", "\"\"")) {
      assertProblem(send(post("/api/payments/malformed", bad, "{}")), ProblemType.KEY_INVALID);
    }
    assertThat(runs("/api/payments/malformed")).isZero();
  }

  // ---- replays ----

  @Test
  void aRetryGetsTheOriginalStatusHeadersAndBodyMarkedReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first =
        send(post("/api/payments/replay", key, "{\"amount\":1000,\"currency\":\"EUR\"}"));
    HttpResponse<String> retry =
        send(post("/api/payments/replay", key, "{ \"currency\": \"EUR\", \"amount\": 1000.0 }"));

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"))
        .isPresent();
    assertThat(retry.headers().firstValue("Content-Type"))
        .isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(retry.headers().allValues("X-Multi")).containsExactly("one", "two");
    assertThat(retry.headers().firstValue("Content-Length"))
        .contains(Integer.toString(first.body().length()));
    assertThat(retry.headers().firstValue("Set-Cookie")).as("cookies are never replayed").isEmpty();
    assertThat(runs("/api/payments/replay")).isEqualTo(1);
  }

  @Test
  void theQuotedAndTheBareSpellingOfAKeyAreOneKey() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/payments/spelling", "\"" + key + "\"", "{}"));
    HttpResponse<String> retry = send(post("/api/payments/spelling", key, "{}"));

    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(runs("/api/payments/spelling")).isEqualTo(1);
  }

  @Test
  void headersTheHandlerNamesInConnectionAreNeverReplayed() throws Exception {
    String key = key();
    send(post("/api/hop", key, "{}"));

    HttpResponse<String> replay = send(post("/api/hop", key, "{}"));

    assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(replay.headers().firstValue("X-Kept")).contains("end to end");
    assertThat(replay.headers().firstValue("X-Hop")).isEmpty();
    assertThat(runs("/api/hop")).isEqualTo(1);
  }

  @Test
  void successesRedirectsAndOtherClientErrorsAreRecordedAndReplayed() throws Exception {
    for (int status : new int[] {200, 201, 202, 303, 400, 402, 404, 409, 422}) {
      String path = "/api/status/" + status;
      HttpResponse<String> retry = twice(path);

      assertThat(retry.statusCode()).as(path).isEqualTo(status);
      assertThat(retry.body()).as(path).isEqualTo("status " + status);
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).as(path).contains("true");
      assertThat(runs(path)).as(path).isEqualTo(1);
    }
  }

  @Test
  void aRouteMayNameItsOwnKeyHeader() throws Exception {
    String path = "/vendor/api/payments/header";
    String key = key();
    HttpRequest.Builder vendor =
        request(path, null, KitRoutes.VENDOR_KEY_HEADER, key)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{}"));

    HttpResponse<String> first = send(vendor);
    HttpResponse<String> retry = send(vendor);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(runs(path)).isEqualTo(1);

    String other = "/vendor/api/payments/standard-header";
    send(post(other, key(), "{}"));
    HttpResponse<String> again = send(post(other, key(), "{}"));
    assertThat(again.headers().firstValue("Idempotent-Replayed"))
        .as("Idempotency-Key is not this route's key header: the request is not guarded")
        .isEmpty();
    assertThat(runs(other)).isEqualTo(2);
  }

  @Test
  void theStripePresetReplaysA500AndNeverRunsTheKeyAgain() throws Exception {
    String path = "/stripe/api/status/500";

    HttpResponse<String> retry = twice(path);

    assertThat(retry.statusCode()).isEqualTo(500);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(runs(path)).isEqualTo(1);
  }

  @Test
  void theSuccessOnlyPresetReleasesA404AndReplaysA201() throws Exception {
    String rejected = "/success-only/api/status/404";
    HttpResponse<String> retried = twice(rejected);

    assertThat(retried.statusCode()).isEqualTo(404);
    assertThat(retried.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(runs(rejected)).as("a 404 is not recorded: the retry ran again").isEqualTo(2);

    String created = "/success-only/api/status/201";
    HttpResponse<String> replayed = twice(created);

    assertThat(replayed.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(runs(created)).isEqualTo(1);
  }

  // ---- a different request under the same key ----

  @Test
  void aRetryWithADifferentBodyIs422AndNeverSeesTheFirstResponse() throws Exception {
    String key = key();
    HttpResponse<String> first = send(post("/api/payments/reuse", key, "{\"amount\":1000}"));

    HttpResponse<String> reuse = send(post("/api/payments/reuse", key, "{\"amount\":9999}"));

    assertProblem(reuse, ProblemType.KEY_REUSED);
    assertThat(reuse.body()).doesNotContain(first.body());
    assertThat(runs("/api/payments/reuse")).isEqualTo(1);
  }

  @Test
  void aRetryWithADifferentQueryIs422() throws Exception {
    String key = key();
    send(post("/api/payments/query?currency=EUR", key, "{}"));

    assertProblem(
        send(post("/api/payments/query?currency=USD", key, "{}")), ProblemType.KEY_REUSED);
    assertThat(runs("/api/payments/query")).isEqualTo(1);
  }

  @Test
  void excludedJsonPointersDoNotMakeARetryDifferent() throws Exception {
    String key = key();
    HttpResponse<String> first =
        send(post("/stamped/api/payments", key, "{\"amount\":1,\"sent_at\":\"12:00:00\"}"));

    HttpResponse<String> retry =
        send(post("/stamped/api/payments", key, "{\"amount\":1,\"sent_at\":\"12:00:07\"}"));

    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void theSameKeyFromAnotherTenantIsAnotherRequest() throws Exception {
    String key = key();
    String path = "/api/payments/tenants";

    HttpResponse<String> a = send(post(path, key, "{}", KitRoutes.TENANT_HEADER, "sk_merchant_a"));
    HttpResponse<String> b = send(post(path, key, "{}", KitRoutes.TENANT_HEADER, "sk_merchant_b"));
    HttpResponse<String> aAgain =
        send(post(path, key, "{}", KitRoutes.TENANT_HEADER, "sk_merchant_a"));

    assertThat(a.body()).isNotEqualTo(b.body());
    assertThat(aAgain.body()).isEqualTo(a.body());
    assertThat(runs(path)).isEqualTo(2);
  }

  @Test
  void aRequestNamingTwoDifferentTenantsIs400AndRunsNothing() throws Exception {
    HttpRequest.Builder twoTenants =
        HttpRequest.newBuilder(uri("/api/payments/ambiguous"))
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key())
            .header(KitRoutes.TENANT_HEADER, "sk_merchant_a")
            .header(KitRoutes.TENANT_HEADER, "sk_merchant_b")
            .POST(HttpRequest.BodyPublishers.ofString("{}"));

    assertProblem(send(twoTenants), ProblemType.TENANT_AMBIGUOUS);
    assertThat(runs("/api/payments/ambiguous")).isZero();
  }

  // ---- in flight ----

  @Test
  void aRetryWhileTheFirstIsInFlightIs409WithRetryAfter() throws Exception {
    HttpResponse<String> dup = duplicateWhileTheFirstRuns("/api/slow/conflict");

    assertThat(dup.headers().firstValue("Retry-After"))
        .hasValueSatisfying(s -> assertThat(Integer.parseInt(s)).isBetween(1, 30));
  }

  @Test
  void aRouteWithARetryAfterHintTellsADuplicateToComeBackSoon() throws Exception {
    HttpResponse<String> dup = duplicateWhileTheFirstRuns("/hinted/api/slow/hint");

    assertThat(dup.headers().firstValue("Retry-After"))
        .as("the route's hint, not the 30s lease")
        .contains("2");
  }

  /**
   * Sends a slow request to {@code path}, then its duplicate while the first runs; asserts the
   * duplicate is 409 in-flight, the first still answers 201 and the handler ran once. Returns the
   * duplicate's answer.
   */
  private HttpResponse<String> duplicateWhileTheFirstRuns(String path) throws Exception {
    String key = key();
    CompletableFuture<HttpResponse<String>> first =
        sendAsync(post(path + "?ms=" + SLOW.toMillis(), key, "{}"));
    awaitRuns(path, first);

    HttpResponse<String> dup = send(post(path + "?ms=" + SLOW.toMillis(), key, "{}"));

    assertProblem(dup, ProblemType.IN_FLIGHT);
    assertThat(first.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    assertThat(runs(path)).isEqualTo(1);
    return dup;
  }

  @Test
  void inWaitModeADuplicateIsHeldUntilTheFirstFinishesThenReplayed() throws Exception {
    String key = key();
    String path = "/wait/api/slow/held";
    CompletableFuture<HttpResponse<String>> first = sendAsync(post(path + "?ms=800", key, "{}"));
    awaitRuns(path, first);

    HttpResponse<String> dup = send(post(path + "?ms=800", key, "{}"));

    assertThat(dup.statusCode()).isEqualTo(201);
    assertThat(dup.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(dup.body()).isEqualTo(first.get(20, TimeUnit.SECONDS).body());
    assertThat(runs(path)).isEqualTo(1);
  }

  // ---- errors: transient ones are released ----

  @Test
  void serverErrorsTimeoutsAndTooManyRequestsAreNeverCached() throws Exception {
    for (int status : new int[] {500, 502, 503, 504, 408, 423, 425, 429}) {
      String path = "/api/status/" + status;
      HttpResponse<String> retry = twice(path);

      assertThat(retry.statusCode()).as(path).isEqualTo(status);
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).as(path).isEmpty();
      assertThat(runs(path)).as(path).isEqualTo(2);
    }
  }

  @Test
  void aHandlerThatThrowsIsAServerErrorAndItsKeyIsReleased() throws Exception {
    HttpResponse<String> retry = twice("/api/throw");

    assertThat(retry.statusCode()).isEqualTo(500);
    assertThat(runs("/api/throw")).isEqualTo(2);
  }

  // ---- responses that cannot be stored; bodies too large ----

  @Test
  void aResponseOverTheCapIsDeliveredCountsAsDoneAndItsRetryIs409ResponseUnavailable()
      throws Exception {
    String key = key();
    String path = "/small/api/big";

    HttpResponse<String> first = send(post(path + "?bytes=10000", key, "{}"));
    HttpResponse<String> retry = send(post(path + "?bytes=10000", key, "{}"));

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(10_000);
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(runs(path)).isEqualTo(1);
  }

  @Test
  void aKeyedBodyOverTheRouteLimitIs413AndRunsNothing() throws Exception {
    String body = "{\"pad\":\"" + "x".repeat(2048) + "\"}";

    assertProblem(send(post("/small/api/payments/huge", key(), body)), ProblemType.BODY_TOO_LARGE);
    assertThat(runs("/small/api/payments/huge")).isZero();
  }

  // ---- the store is down ----

  @Test
  void aStoreThatIsDownFailsClosedWith503AndRetryAfterAndRunsNothing() throws Exception {
    try (Deployment down = deploy(new FakeUnavailableStore())) {
      HttpResponse<String> r = send(post(down, "/api/payments", key(), "{}"));

      assertProblem(r, ProblemType.STORE_UNAVAILABLE);
      assertThat(r.headers().firstValue("Retry-After")).contains("1");
      assertThat(down.api().totalExecutions()).isZero();
    }
  }

  @Test
  void aFailOpenRouteRunsUnprotectedWhenTheStoreIsDown() throws Exception {
    try (Deployment down = deploy(new FakeUnavailableStore())) {
      String key = key();

      send(post(down, "/open/api/payments", key, "{\"amount\":1}"));
      HttpResponse<String> second = send(post(down, "/open/api/payments", key, "{\"amount\":1}"));

      assertThat(second.statusCode()).isEqualTo(201);
      assertThat(second.body()).contains("\"received_bytes\":12");
      assertThat(down.api().executions("/open/api/payments")).isEqualTo(2);
    }
  }

  // ---- helpers ----

  /** A fresh key. */
  protected static String key() {
    return UUID.randomUUID().toString();
  }

  /** The deployment every row but the store-down ones runs on. */
  protected Deployment app() {
    return app;
  }

  /** How often the handler of {@code path} (without the query) ran on {@link #app()}. */
  protected int runs(String path) {
    return app.api().executions(path);
  }

  protected URI uri(String pathAndQuery) {
    return uri(app, pathAndQuery);
  }

  private static URI uri(Deployment d, String pathAndQuery) {
    String base = d.base().toString();
    return URI.create(
        (base.endsWith("/") ? base.substring(0, base.length() - 1) : base) + pathAndQuery);
  }

  /**
   * A request from {@link #TENANT} with the key unless it is null, and extra header name/value
   * pairs.
   */
  protected HttpRequest.Builder request(String pathAndQuery, String key, String... headers) {
    return request(app, pathAndQuery, key, headers);
  }

  private static HttpRequest.Builder request(
      Deployment d, String pathAndQuery, String key, String... headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(uri(d, pathAndQuery)).timeout(Duration.ofSeconds(20));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    boolean tenantGiven = false;
    for (int i = 0; headers != null && i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
      tenantGiven |= headers[i].equalsIgnoreCase(KitRoutes.TENANT_HEADER);
    }
    if (!tenantGiven) {
      b.header(KitRoutes.TENANT_HEADER, TENANT);
    }
    return b;
  }

  /** A JSON POST from {@link #TENANT}. */
  protected HttpRequest.Builder post(
      String pathAndQuery, String key, String json, String... headers) {
    return post(app, pathAndQuery, key, json, headers);
  }

  private static HttpRequest.Builder post(
      Deployment d, String pathAndQuery, String key, String json, String... headers) {
    return request(d, pathAndQuery, key, headers)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json));
  }

  protected HttpResponse<String> send(HttpRequest.Builder request)
      throws IOException, InterruptedException {
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  protected CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest.Builder request) {
    return client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Sends one keyed POST to {@code path} twice; returns the second answer. */
  private HttpResponse<String> twice(String path) throws IOException, InterruptedException {
    String key = key();
    send(post(path, key, "{}"));
    return send(post(path, key, "{}"));
  }

  /**
   * Waits until the handler of {@code path} has started: the request {@code first} holds its key.
   * Gives up at once if {@code first} was answered without running it, saying what it got.
   */
  protected void awaitRuns(String path, CompletableFuture<HttpResponse<String>> first)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (runs(path) < 1) {
      if (first.isDone()) {
        throw new AssertionError(
            path + " did not start: the request was answered " + answer(first));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(path + " did not start within 20 s");
      }
      Thread.sleep(5);
    }
  }

  private static String answer(CompletableFuture<HttpResponse<String>> done) {
    try {
      HttpResponse<String> r = done.get();
      return r.statusCode() + " " + r.body();
    } catch (Exception e) {
      return e.toString();
    }
  }

  /** An RFC 9457 answer of {@code type}: its status, media type, type URI and an exact length. */
  protected static void assertProblem(HttpResponse<String> r, ProblemType type) {
    assertThat(r.statusCode()).as("status of %s", r.body()).isEqualTo(type.status());
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith(Problems.MEDIA_TYPE));
    assertThat(r.body()).contains("\"type\":\"" + type.uri() + "\"");
    assertThat(r.headers().firstValue("Content-Length"))
        .contains(Integer.toString(r.body().length()));
  }
}

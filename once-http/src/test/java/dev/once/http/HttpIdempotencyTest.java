package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.FakeUnavailableStore;
import dev.once.FinalFailure;
import dev.once.InFlightPolicy;
import dev.once.Once;
import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import dev.once.ParkingSignalStore;
import dev.once.Recording;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * DESIGN §4 row by row, at the framework-neutral level (the servlet and gateway tests add sockets).
 */
@Timeout(30)
class HttpIdempotencyTest {

  private final ParkingSignalStore store = new ParkingSignalStore();
  private final Once once = Once.of(store);
  private final HttpIdempotency http =
      HttpIdempotency.builder(once)
          .route("/required", RoutePolicy.builder().keyRequired(true).build())
          .route(
              "/waiting",
              RoutePolicy.builder()
                  .execution(
                      ExecutionPolicy.builder()
                          .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(5)))
                          .build())
                  .maxWaitersPerKey(1)
                  .build())
          .route(
              "/small",
              RoutePolicy.builder()
                  .maxRequestBytes(10)
                  .execution(ExecutionPolicy.builder().maxResultBytes(10).build())
                  .build())
          .route(
              "/stamped",
              RoutePolicy.builder()
                  .excludeJsonPointer("/sent_at")
                  .denyReplayHeader("X-Trace")
                  .build())
          .route(
              "/brief",
              RoutePolicy.builder()
                  .execution(
                      ExecutionPolicy.builder()
                          .lease(Duration.ofMillis(100))
                          .heartbeat(false)
                          .build())
                  .build())
          .route("/broken", RoutePolicy.builder().classifier(new FakeBrokenClassifier()).build())
          .route("/fatal", RoutePolicy.builder().classifier(new FakeFatalClassifier()).build())
          .build();

  @AfterEach
  void close() {
    once.close();
  }

  private static IncomingRequest post(String path, String key, String body, String... headers) {
    Headers.Builder h =
        Headers.builder().add("Content-Type", "application/json").add("Api-Key", "sk_merchant_1");
    if (key != null) {
      h.add("Idempotency-Key", key);
    }
    for (int i = 0; i < headers.length; i += 2) {
      h.add(headers[i], headers[i + 1]);
    }
    return IncomingRequest.of("POST", path, h.build(), body.getBytes(StandardCharsets.UTF_8));
  }

  private Decision begin(IncomingRequest r) {
    return http.begin(http.route(r.path()), r);
  }

  private static StoredResponse created(String body) {
    return new StoredResponse(
        201,
        Headers.of(
            "Content-Type",
            "application/json",
            "Location",
            "/p/1",
            "Set-Cookie",
            "session=secret",
            "Date",
            "Sun, 22 Nov 2026 01:00:00 GMT",
            "X-Trace",
            "abc"),
        body.getBytes(StandardCharsets.UTF_8));
  }

  private static String key() {
    return "\"" + UUID.randomUUID() + "\"";
  }

  private static ProblemType problemOf(Decision d) {
    assertThat(d).isInstanceOf(Decision.Respond.class);
    StoredResponse r = ((Decision.Respond) d).response();
    assertThat(r.headers().first("Content-Type")).contains(Problems.MEDIA_TYPE);
    String body = new String(r.body(), StandardCharsets.UTF_8);
    for (ProblemType t : ProblemType.values()) {
      if (body.contains("\"type\":\"" + t.uri() + "\"")) {
        assertThat(r.status()).isEqualTo(t.status());
        return t;
      }
    }
    throw new AssertionError("not a problem: " + body);
  }

  @Test
  void uncoveredMethodsPassThroughUntouched() {
    IncomingRequest get = IncomingRequest.of("GET", "/required", Headers.EMPTY, null);

    assertThat(begin(get)).isEqualTo(new Decision.PassThrough(Decision.Reason.NOT_COVERED));
  }

  @Test
  void withRoutesCoverageOnlyTheRoutesAreGuardedAndTheRestIsNeverRecorded() {
    HttpIdempotency routesOnly =
        HttpIdempotency.builder(once)
            .coverage(Coverage.ROUTES)
            .route("/payments", RoutePolicy.DEFAULTS)
            .build();
    String key = "k-" + java.util.UUID.randomUUID();

    IncomingRequest elsewhere = post("/unmapped", key, "{}");
    assertThat(routesOnly.route("/unmapped").covers("POST")).isFalse();
    assertThat(routesOnly.begin(routesOnly.route("/unmapped"), elsewhere))
        .isEqualTo(new Decision.PassThrough(Decision.Reason.NOT_COVERED));
    assertThat(routesOnly.begin(routesOnly.route("/unmapped"), elsewhere))
        .as("nothing was claimed: the same key again is not in flight")
        .isEqualTo(new Decision.PassThrough(Decision.Reason.NOT_COVERED));

    assertThat(routesOnly.route("/payments").covers("POST")).isTrue();
    assertThat(routesOnly.begin(routesOnly.route("/payments"), post("/payments", key, "{}")))
        .isInstanceOf(Decision.Proceed.class);
    assertThat(http.route("/unmapped").covers("POST"))
        .as("by default the rest is guarded with the defaults")
        .isTrue();
  }

  @Test
  void coverageIsSpelledAllOrRoutes() {
    assertThat(Coverage.parse(" Routes ")).isEqualTo(Coverage.ROUTES);
    assertThat(Coverage.parse("all")).isEqualTo(Coverage.ALL);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Coverage.parse("annotated"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("all or routes");
  }

  @Test
  void noKeyOnAnOptionalRoutePassesThroughUnrecorded() {
    assertThat(begin(post("/anything", null, "{}")))
        .isEqualTo(new Decision.PassThrough(Decision.Reason.NO_KEY));
  }

  @Test
  void noKeyOnARequiredRouteIs400KeyMissing() {
    assertThat(problemOf(begin(post("/required", null, "{}")))).isEqualTo(ProblemType.KEY_MISSING);
  }

  @Test
  void malformedKeyIs400KeyInvalid() {
    assertThat(problemOf(begin(post("/p", "\"unterminated", "{}"))))
        .isEqualTo(ProblemType.KEY_INVALID);
    assertThat(problemOf(begin(post("/p", "k".repeat(256), "{}"))))
        .isEqualTo(ProblemType.KEY_INVALID);
    assertThat(problemOf(begin(post("/p", "", "{}")))).isEqualTo(ProblemType.KEY_INVALID);
  }

  @Test
  void twoKeyHeadersAre400KeyInvalid() {
    assertThat(problemOf(begin(post("/p", "a", "{}", "Idempotency-Key", "b"))))
        .isEqualTo(ProblemType.KEY_INVALID);
  }

  @Test
  void oversizedBodyIs413() {
    assertThat(problemOf(begin(post("/small", key(), "{\"a\":\"0123456789\"}"))))
        .isEqualTo(ProblemType.BODY_TOO_LARGE);
  }

  @Test
  void retryGetsTheOriginalStatusHeadersAndBodyMarkedReplayed() {
    String key = key();
    Decision first = begin(post("/p", key, "{\"amount\":1000}"));
    Recording rec =
        ((Decision.Proceed) first).exchange().record(created("{\"id\":\"pay_1\"}")).recording();

    Decision retry = begin(post("/p", key, "{ \"amount\": 1000.0 }"));

    assertThat(rec).isEqualTo(Recording.RECORDED);
    assertThat(retry).isInstanceOf(Decision.Respond.class);
    Decision.Respond replay = (Decision.Respond) retry;
    assertThat(replay.replayed()).isTrue();
    assertThat(replay.response().status()).isEqualTo(201);
    assertThat(new String(replay.response().body(), StandardCharsets.UTF_8))
        .isEqualTo("{\"id\":\"pay_1\"}");
    assertThat(replay.response().headers().first("Location")).contains("/p/1");
    assertThat(replay.response().headers().first("Idempotent-Replayed")).contains("true");
    assertThat(replay.response().headers().first("Set-Cookie")).isEmpty();
    assertThat(replay.response().headers().first("Date")).isEmpty();
  }

  @Test
  void denyListedHeadersAndExcludedPointersAreHonoured() {
    String key = key();
    Decision first = begin(post("/stamped", key, "{\"amount\":1,\"sent_at\":\"12:00\"}"));
    ((Decision.Proceed) first).exchange().record(created("{}"));

    Decision retry = begin(post("/stamped", key, "{\"amount\":1,\"sent_at\":\"12:05\"}"));

    assertThat(((Decision.Respond) retry).response().headers().first("X-Trace")).isEmpty();
  }

  @Test
  void retryWithADifferentBodyIs422AndNeverTheCachedResult() {
    String key = key();
    ((Decision.Proceed) begin(post("/p", key, "{\"amount\":1000}")))
        .exchange()
        .record(created("{\"id\":\"pay_1\"}"));

    Decision reuse = begin(post("/p", key, "{\"amount\":9999}"));

    assertThat(problemOf(reuse)).isEqualTo(ProblemType.KEY_REUSED);
    assertThat(new String(((Decision.Respond) reuse).response().body(), StandardCharsets.UTF_8))
        .doesNotContain("pay_1");
  }

  @Test
  void theSameKeyFromAnotherTenantIsAnotherRequest() {
    String key = key();
    ((Decision.Proceed) begin(post("/p", key, "{}")))
        .exchange()
        .record(created("{\"id\":\"pay_1\"}"));

    IncomingRequest other =
        new IncomingRequest(
            "POST",
            "/p",
            "",
            Headers.of(
                "Content-Type",
                "application/json",
                "Api-Key",
                "sk_merchant_2",
                "Idempotency-Key",
                key),
            "{}".getBytes(StandardCharsets.UTF_8),
            null);

    assertThat(begin(other)).isInstanceOf(Decision.Proceed.class);
  }

  @Test
  void retryWhileTheFirstIsInFlightIs409WithRetryAfter() {
    String key = key();
    begin(post("/p", key, "{}"));

    Decision dup = begin(post("/p", key, "{}"));

    assertThat(problemOf(dup)).isEqualTo(ProblemType.IN_FLIGHT);
    assertThat(((Decision.Respond) dup).response().headers().first("Retry-After"))
        .hasValueSatisfying(s -> assertThat(Integer.parseInt(s)).isBetween(1, 30));
  }

  @Test
  void inWaitModeTheDuplicateIsHeldAndReplayedButOnlyUpToTheWaiterLimit() throws Exception {
    String key = key();
    Exchange first = ((Decision.Proceed) begin(post("/waiting", key, "{}"))).exchange();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      Future<Decision> waiter = pool.submit(() -> begin(post("/waiting", key, "{}")));
      store.awaitParked(Duration.ofSeconds(5)); // the first duplicate waits
      Decision overLimit = begin(post("/waiting", key, "{}"));

      first.record(created("{\"id\":\"pay_1\"}"));

      assertThat(problemOf(overLimit)).isEqualTo(ProblemType.IN_FLIGHT);
      assertThat(waiter.get(5, TimeUnit.SECONDS))
          .isInstanceOfSatisfying(Decision.Respond.class, r -> assertThat(r.replayed()).isTrue());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void serverErrorsAndTooManyRequestsAreNeverCached() {
    for (int status : new int[] {500, 502, 503, 408, 429}) {
      String key = key();
      Exchange ex = ((Decision.Proceed) begin(post("/p", key, "{}"))).exchange();

      assertThat(ex.record(new StoredResponse(status, Headers.EMPTY, null)).recording())
          .isEqualTo(Recording.RELEASED);
      assertThat(begin(post("/p", key, "{}"))).isInstanceOf(Decision.Proceed.class);
    }
  }

  @Test
  void clientErrorsAreFinalAndReplayed() {
    for (int status : new int[] {400, 402, 404, 422}) {
      String key = key();
      Exchange ex = ((Decision.Proceed) begin(post("/p", key, "{}"))).exchange();
      ex.record(
          new StoredResponse(status, Headers.EMPTY, "declined".getBytes(StandardCharsets.UTF_8)));

      Decision retry = begin(post("/p", key, "{}"));

      assertThat(((Decision.Respond) retry).response().status()).isEqualTo(status);
      assertThat(((Decision.Respond) retry).replayed()).isTrue();
    }
  }

  @Test
  void handlerExceptionReleasesTheKey() {
    String key = key();
    ((Decision.Proceed) begin(post("/p", key, "{}"))).exchange().fail();

    assertThat(begin(post("/p", key, "{}"))).isInstanceOf(Decision.Proceed.class);
  }

  /**
   * The request before died mid-flight (its lease ended): the retry steals the key, and its handler
   * throws. The request before may have had its effect, so the key is not released but handed over:
   * the record stays, its lease ended, and the next retry steals it again at once.
   */
  @Test
  void handlerExceptionUnderAStolenLeaseHandsTheKeyOver() throws InterruptedException {
    String key = key();
    ((Decision.Proceed) begin(post("/brief", key, "{}"))).exchange().abandon();
    Thread.sleep(150);
    Exchange stolen = ((Decision.Proceed) begin(post("/brief", key, "{}"))).exchange();

    assertThat(stolen.fail()).isEqualTo(Recording.UNKNOWN);

    IdempotencyRecord left = store.get(RecordId.of(stolen.scope(), stolen.key())).orElseThrow();
    assertThat(left.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(left.token()).isEqualTo(stolen.token());
    assertThat(left.isStealable())
        .as("the lease ended at once, not 100 ms after the steal")
        .isTrue();
    assertThat(begin(post("/brief", key, "{}"))).isInstanceOf(Decision.Proceed.class);
  }

  @Test
  void twoDifferentTenantHeadersAreRefusedAndOneRepeatedIsOneTenant() {
    Decision ambiguous = begin(post("/p", key(), "{}", "Api-Key", "sk_merchant_2"));
    Decision repeated = begin(post("/p", key(), "{}", "Api-Key", "sk_merchant_1"));

    assertThat(problemOf(ambiguous)).isEqualTo(ProblemType.TENANT_AMBIGUOUS);
    assertThat(repeated).isInstanceOf(Decision.Proceed.class);
  }

  @Test
  void aRequiredTenantHeaderThatIsMissingIsRefused() {
    HttpIdempotency strict =
        HttpIdempotency.builder(once).scope(ScopeResolver.requiredHeader("Api-Key")).build();
    IncomingRequest anonymous =
        IncomingRequest.of("POST", "/p", Headers.of("Idempotency-Key", key()), new byte[0]);

    assertThat(problemOf(strict.begin(strict.route("/p"), anonymous)))
        .isEqualTo(ProblemType.TENANT_MISSING);
    assertThat(strict.begin(strict.route("/p"), post("/p", key(), "{}")))
        .isInstanceOf(Decision.Proceed.class);
  }

  @Test
  void theResponseCapCountsTheBodyNotTheHeaders() {
    String key = key();
    Exchange ex = ((Decision.Proceed) begin(post("/small", key, "{}"))).exchange();

    Recording rec = ex.record(created("0123456789")).recording();

    assertThat(rec).isEqualTo(Recording.RECORDED);
    assertThat(begin(post("/small", key, "{}")))
        .isInstanceOf(Decision.Respond.class)
        .extracting(
            d -> new String(((Decision.Respond) d).response().body(), StandardCharsets.UTF_8))
        .isEqualTo("0123456789");
  }

  @Test
  void responseOverTheCapCountsAsDoneAndRetriesGet409ResponseUnavailable() {
    String key = key();
    Exchange ex = ((Decision.Proceed) begin(post("/small", key, "{}"))).exchange();

    Recording rec = ex.record(created("{\"id\":\"a-long-payment-id\"}")).recording();

    assertThat(rec).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(problemOf(begin(post("/small", key, "{}"))))
        .isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
  }

  @Test
  void streamedResponseCountsAsDone() {
    String key = key();
    ((Decision.Proceed) begin(post("/p", key, "{}"))).exchange().recordUnavailable();

    assertThat(problemOf(begin(post("/p", key, "{}")))).isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
  }

  @Test
  void streamedSuccessCountsAsDoneButAStreamedServerErrorReleasesTheKey() {
    String ok = key();
    String failed = key();

    Recording done =
        ((Decision.Proceed) begin(post("/p", ok, "{}")))
            .exchange()
            .recordUnavailable(200)
            .recording();
    Recording released =
        ((Decision.Proceed) begin(post("/p", failed, "{}")))
            .exchange()
            .recordUnavailable(503)
            .recording();

    assertThat(done).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(problemOf(begin(post("/p", ok, "{}")))).isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(released).isEqualTo(Recording.RELEASED);
    assertThat(begin(post("/p", failed, "{}"))).isInstanceOf(Decision.Proceed.class);
  }

  @Test
  void aClassifierThatThrowsStillFinishesTheLeaseAsDoneWhetherTheResponseWasCapturedOrStreamed() {
    String captured = key();
    String streamed = key();

    Exchange.Recorded recorded =
        ((Decision.Proceed) begin(post("/broken", captured, "{}")))
            .exchange()
            .record(created("{\"id\":\"pay_1\"}"));
    Exchange.Recorded unavailable =
        ((Decision.Proceed) begin(post("/broken", streamed, "{}")))
            .exchange()
            .recordUnavailable(200);

    assertThat(recorded.recording()).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(unavailable.recording()).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(problemOf(begin(post("/broken", captured, "{}"))))
        .isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(problemOf(begin(post("/broken", streamed, "{}"))))
        .isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
  }

  @Test
  void aClassifierErrorPropagatesOnceTheLeaseIsDoneByTheCallThatRecords() {
    String blocking = key();
    String async = key();
    Exchange first = ((Decision.Proceed) begin(post("/fatal", blocking, "{}"))).exchange();
    Exchange second = ((Decision.Proceed) begin(post("/fatal", async, "{}"))).exchange();

    assertThatThrownBy(() -> first.record(created("{}"))).isInstanceOf(LinkageError.class);
    assertThatThrownBy(() -> second.recordAsync(created("{}")).toCompletableFuture().join())
        .hasCauseInstanceOf(LinkageError.class);

    assertThat(problemOf(begin(post("/fatal", blocking, "{}"))))
        .isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(problemOf(begin(post("/fatal", async, "{}"))))
        .isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
  }

  @Test
  void anEngineClosedUnderAnAsynchronousCallerIsA503NotAFailedStage() {
    once.close();

    Decision decision =
        http.beginAsync(http.route("/p"), post("/p", key(), "{}")).toCompletableFuture().join();

    assertThat(problemOf(decision)).isEqualTo(ProblemType.STORE_UNAVAILABLE);
  }

  @Test
  void aStreamedResponseWithAStatusOutsideHttpsRangeCountsAsDone() {
    String key = key();

    Recording recording =
        ((Decision.Proceed) begin(post("/p", key, "{}")))
            .exchange()
            .recordUnavailable(600)
            .recording();

    assertThat(recording).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(problemOf(begin(post("/p", key, "{}")))).isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
  }

  @Test
  void aHandlerExceptionThatIsFinalOrThatTheClassifierChokesOnCountsAsDoneRatherThanReleased() {
    String declined = key();
    String broken = key();

    Recording finalFailure =
        ((Decision.Proceed) begin(post("/p", declined, "{}")))
            .exchange()
            .fail(new FinalFailure("card_declined", "declined"));
    Recording classifierBug =
        ((Decision.Proceed) begin(post("/broken", broken, "{}")))
            .exchange()
            .fail(new IllegalStateException("the handler failed"));

    assertThat(finalFailure).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(classifierBug).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(problemOf(begin(post("/p", declined, "{}"))))
        .isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(problemOf(begin(post("/broken", broken, "{}"))))
        .isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
  }

  @Test
  void aResponseTheCodecCannotEncodeCountsAsDoneAndRetriesGet409ResponseUnavailable() {
    String key = key();
    Exchange ex = ((Decision.Proceed) begin(post("/p", key, "{}"))).exchange();
    Headers.Builder tooMany = Headers.builder();
    for (int i = 0; i <= 65_535; i++) {
      tooMany.add("X-H" + i, "v");
    }

    Exchange.Recorded recorded = ex.record(new StoredResponse(201, tooMany.build(), null));

    assertThat(recorded.outcome()).isEqualTo(Outcome.COMPLETED);
    assertThat(recorded.recording()).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(problemOf(begin(post("/p", key, "{}")))).isEqualTo(ProblemType.RESPONSE_UNAVAILABLE);
  }

  @Test
  void abandonedExchangeKeepsTheKeyInProgress() {
    String key = key();
    ((Decision.Proceed) begin(post("/p", key, "{}"))).exchange().abandon();

    assertThat(problemOf(begin(post("/p", key, "{}")))).isEqualTo(ProblemType.IN_FLIGHT);
  }

  @Test
  void storeDownFailClosedIs503WithRetryAfter() {
    try (Once down = Once.of(new FakeUnavailableStore())) {
      HttpIdempotency h = HttpIdempotency.builder(down).build();
      IncomingRequest r = post("/p", key(), "{}");

      Decision d = h.begin(h.route("/p"), r);

      assertThat(problemOf(d)).isEqualTo(ProblemType.STORE_UNAVAILABLE);
      assertThat(((Decision.Respond) d).response().headers().first("Retry-After")).contains("1");
    }
  }

  @Test
  void storeDownFailOpenPassesThrough() {
    try (Once down = Once.of(new FakeUnavailableStore())) {
      HttpIdempotency h =
          HttpIdempotency.builder(down)
              .defaults(
                  RoutePolicy.builder()
                      .execution(
                          ExecutionPolicy.builder().failureMode(FailureMode.FAIL_OPEN).build())
                      .build())
              .build();

      assertThat(h.begin(h.route("/p"), post("/p", key(), "{}")))
          .isEqualTo(new Decision.PassThrough(Decision.Reason.FAIL_OPEN));
    }
  }

  @Test
  void aHerdOfIdenticalRequestsProceedsOnce() throws Exception {
    String key = key();
    int herd = 200;
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(32);
    try {
      java.util.List<Future<Decision>> all = new java.util.ArrayList<>();
      for (int i = 0; i < herd; i++) {
        all.add(
            pool.submit(
                () -> {
                  go.await();
                  return begin(post("/p", key, "{\"amount\":1}"));
                }));
      }
      go.countDown();
      int proceeded = 0;
      for (Future<Decision> f : all) {
        Decision d = f.get(10, TimeUnit.SECONDS);
        if (d instanceof Decision.Proceed) {
          proceeded++;
        } else {
          assertThat(problemOf(d)).isEqualTo(ProblemType.IN_FLIGHT);
        }
      }
      assertThat(proceeded).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  /** A classifier that fails fatally: an {@link Error} on every response and exception. */
  private static final class FakeFatalClassifier implements OutcomeClassifier<StoredResponse> {
    @Override
    public Outcome classify(StoredResponse response) {
      throw new LinkageError("classifier fatal");
    }

    @Override
    public Outcome classifyError(Throwable error) {
      throw new LinkageError("classifier fatal");
    }
  }

  /** A classifier with a bug: it throws on every response and every exception. */
  private static final class FakeBrokenClassifier implements OutcomeClassifier<StoredResponse> {
    @Override
    public Outcome classify(StoredResponse response) {
      throw new IllegalStateException("classifier bug");
    }

    @Override
    public Outcome classifyError(Throwable error) {
      throw new IllegalStateException("classifier bug");
    }
  }
}

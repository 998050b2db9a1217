package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static dev.once.servlet.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.FakeUnavailableStore;
import dev.once.http.ProblemType;
import dev.once.http.RoutePolicy;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** DESIGN §4, row by row, over a real socket to Jetty. */
class HttpSemanticsTest extends GuardedAppTest {

  @Test
  void uncoveredMethodsAreUntouched() throws Exception {
    String key = key();
    HttpRequest.Builder get = HttpRequest.newBuilder(shop.uri("/required/api/payments/get"))
        .header("Idempotency-Key", key).GET();

    HttpResponse<String> first = shop.send(get);
    HttpResponse<String> second = shop.send(get);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(second.body()).isNotEqualTo(first.body());
    assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(shop.app.executions("/required/api/payments/get")).isEqualTo(2);
  }

  @Test
  void putIsUntouchedUnlessTheRouteCoversIt() throws Exception {
    String key = key();
    HttpRequest.Builder put = shop.post("/api/payments/put", key, "{}").PUT(HttpRequest.BodyPublishers.ofString("{}"));
    HttpRequest.Builder coveredPut = shop.post("/puts/api/payments", key, "{}").PUT(HttpRequest.BodyPublishers.ofString("{}"));

    shop.send(put);
    shop.send(put);
    shop.send(coveredPut);
    HttpResponse<String> replay = shop.send(coveredPut);

    assertThat(shop.app.executions("/api/payments/put")).isEqualTo(2);
    assertThat(shop.app.executions("/puts/api/payments")).isEqualTo(1);
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void noKeyOnAnOptionalRouteRunsEveryTimeAndRecordsNothing() throws Exception {
    int claims = shop.store.claimedIds();

    shop.postJson("/api/payments/nokey", null, "{}");
    HttpResponse<String> second = shop.postJson("/api/payments/nokey", null, "{}");

    assertThat(second.statusCode()).isEqualTo(201);
    assertThat(shop.app.executions("/api/payments/nokey")).isEqualTo(2);
    assertThat(shop.store.claimedIds()).isEqualTo(claims);
  }

  @Test
  void noKeyOnARequiredRouteIs400KeyMissing() throws Exception {
    HttpResponse<String> r = shop.postJson("/required/api/payments", null, "{}");

    assertProblem(r, ProblemType.KEY_MISSING);
    assertThat(shop.app.executions("/required/api/payments")).isZero();
  }

  @Test
  void malformedKeyIs400KeyInvalid() throws Exception {
    HttpResponse<String> r = shop.postJson("/api/payments/malformed", "\"unterminated", "{}");

    assertProblem(r, ProblemType.KEY_INVALID);
    assertThat(shop.app.executions("/api/payments/malformed")).isZero();
  }

  @Test
  void aRetryGetsTheOriginalStatusHeadersAndBodyMarkedReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/payments/replay", key, "{\"amount\":1000,\"currency\":\"EUR\"}");
    HttpResponse<String> retry = shop.postJson("/api/payments/replay", key, "{ \"currency\": \"EUR\", \"amount\": 1000.0 }");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
    assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(retry.headers().allValues("X-Multi")).containsExactly("one", "two");
    assertThat(retry.headers().firstValue("Content-Length")).contains(Integer.toString(first.body().length()));
    assertThat(retry.headers().firstValue("Set-Cookie")).isEmpty();
    assertThat(shop.app.executions("/api/payments/replay")).isEqualTo(1);
  }

  @Test
  void aRetryWithADifferentBodyIs422AndNeverSeesTheFirstResponse() throws Exception {
    String key = key();
    HttpResponse<String> first = shop.postJson("/api/payments/reuse", key, "{\"amount\":1000}");

    HttpResponse<String> reuse = shop.postJson("/api/payments/reuse", key, "{\"amount\":9999}");

    assertProblem(reuse, ProblemType.KEY_REUSED);
    assertThat(reuse.body()).doesNotContain(first.body());
    assertThat(shop.app.executions("/api/payments/reuse")).isEqualTo(1);
  }

  @Test
  void aRetryWithADifferentQueryIsADifferentRequest() throws Exception {
    String key = key();
    shop.postJson("/api/payments/query?currency=EUR", key, "{}");

    assertProblem(shop.postJson("/api/payments/query?currency=USD", key, "{}"), ProblemType.KEY_REUSED);
  }

  @Test
  void excludedJsonPointersDoNotMakeADifferentRequest() throws Exception {
    String key = key();
    HttpResponse<String> first = shop.postJson("/stamped/api/payments", key, "{\"amount\":1,\"sent_at\":\"12:00:00\"}");

    HttpResponse<String> retry = shop.postJson("/stamped/api/payments", key, "{\"amount\":1,\"sent_at\":\"12:00:07\"}");

    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void aRetryWhileTheFirstIsInFlightIs409WithRetryAfter() throws Exception {
    String key = key();
    CompletableFuture<HttpResponse<String>> first = shop.client.sendAsync(
        shop.post("/api/slow?ms=1500", key, "{}").build(), HttpResponse.BodyHandlers.ofString());
    shop.awaitExecutions("/api/slow", 1, first);

    HttpResponse<String> dup = shop.postJson("/api/slow?ms=1500", key, "{}");

    assertProblem(dup, ProblemType.IN_FLIGHT);
    assertThat(dup.headers().firstValue("Retry-After")).hasValueSatisfying(
        s -> assertThat(Integer.parseInt(s)).isBetween(1, 30));
    assertThat(first.get().statusCode()).isEqualTo(201);
    assertThat(shop.app.executions("/api/slow")).isEqualTo(1);
  }

  @Test
  void inWaitModeADuplicateIsHeldUntilTheFirstFinishesThenReplayed() throws Exception {
    String key = key();
    CompletableFuture<HttpResponse<String>> first = shop.client.sendAsync(
        shop.post("/wait/api/slow?ms=800", key, "{}").build(), HttpResponse.BodyHandlers.ofString());
    shop.awaitExecutions("/wait/api/slow", 1, first);

    HttpResponse<String> dup = shop.postJson("/wait/api/slow?ms=800", key, "{}");

    assertThat(dup.statusCode()).isEqualTo(201);
    assertThat(dup.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(dup.body()).isEqualTo(first.get().body());
    assertThat(shop.app.executions("/wait/api/slow")).isEqualTo(1);
  }

  /** Sends the same request twice to a handler answering {@code status}; returns the second answer. */
  private HttpResponse<String> twiceWithStatus(int status) throws Exception {
    String key = key();
    String path = "/api/status/" + status;
    HttpResponse<String> first = shop.postJson(path, key, "{}");
    assertThat(first.statusCode()).isEqualTo(status);
    return shop.postJson(path, key, "{}");
  }

  @Test
  void serverErrorsTimeoutsAndTooManyRequestsAreNeverCached() throws Exception {
    for (int status : new int[] {500, 502, 503, 504, 408, 423, 425, 429}) {
      HttpResponse<String> retry = twiceWithStatus(status);

      assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("status %d", status).isEmpty();
      assertThat(shop.app.executions("/api/status/" + status)).as("status %d", status).isEqualTo(2);
    }
  }

  @Test
  void successesRedirectsAndOtherClientErrorsAreRecordedAndReplayed() throws Exception {
    for (int status : new int[] {200, 201, 202, 301, 303, 400, 402, 404, 409, 422}) {
      HttpResponse<String> retry = twiceWithStatus(status);

      assertThat(retry.statusCode()).isEqualTo(status);
      assertThat(retry.body()).isEqualTo("status " + status);
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("status %d", status).contains("true");
      assertThat(shop.app.executions("/api/status/" + status)).as("status %d", status).isEqualTo(1);
    }
  }

  @Test
  void aHandlerThatThrowsIsAServerErrorAndItsKeyIsReleased() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/throw", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/throw", key, "{}");

    assertThat(first.statusCode()).isEqualTo(500);
    assertThat(retry.statusCode()).isEqualTo(500);
    assertThat(shop.app.executions("/api/throw")).isEqualTo(2);
  }

  @Test
  void theSameKeyFromAnotherTenantIsAnotherRequest() throws Exception {
    String key = key();

    HttpResponse<String> a = shop.postJson("/api/payments/tenants", key, "{}", "Api-Key", "sk_merchant_a");
    HttpResponse<String> b = shop.postJson("/api/payments/tenants", key, "{}", "Api-Key", "sk_merchant_b");
    HttpResponse<String> aAgain = shop.postJson("/api/payments/tenants", key, "{}", "Api-Key", "sk_merchant_a");
    HttpResponse<String> bAgain = shop.postJson("/api/payments/tenants", key, "{}", "Api-Key", "sk_merchant_b");

    assertThat(a.body()).isNotEqualTo(b.body());
    assertThat(aAgain.body()).isEqualTo(a.body());
    assertThat(bAgain.body()).isEqualTo(b.body());
    assertThat(shop.app.executions("/api/payments/tenants")).isEqualTo(2);
  }

  @Test
  void routesAreMatchedOnThePathInsideTheApplication() throws Exception {
    try (GuardedApp mounted = GuardedApp.at("/shop")) {
      HttpResponse<String> r = mounted.postJson("/required/api/payments", null, "{}");

      assertProblem(r, ProblemType.KEY_MISSING);
    }
  }

  @Test
  void aStoreThatIsDownFailsClosedWith503AndRunsNothing() throws Exception {
    FakeUnavailableStore down = new FakeUnavailableStore();
    try (GuardedApp closed = GuardedApp.over(down, b -> b)) {
      HttpResponse<String> r = closed.postJson("/api/payments", key(), "{}");

      assertProblem(r, ProblemType.STORE_UNAVAILABLE);
      assertThat(r.headers().firstValue("Retry-After")).contains("1");
      assertThat(closed.app.totalExecutions()).isZero();
    }
  }

  @Test
  void aFailOpenRouteRunsUnprotectedWhenTheStoreIsDown() throws Exception {
    FakeUnavailableStore down = new FakeUnavailableStore();
    try (GuardedApp open = GuardedApp.over(down, b -> b.defaults(RoutePolicy.builder()
        .execution(ExecutionPolicy.builder().failureMode(FailureMode.FAIL_OPEN).build()).build()))) {
      String key = key();

      open.postJson("/api/payments", key, "{\"amount\":1}");
      HttpResponse<String> second = open.postJson("/api/payments", key, "{\"amount\":1}");

      assertThat(second.statusCode()).isEqualTo(201);
      assertThat(second.body()).contains("received_bytes\":12");
      assertThat(open.app.executions("/api/payments")).isEqualTo(2);
    }
  }
}

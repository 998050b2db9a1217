package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Every row of DESIGN §4, seen by a client through the gateway, with a real upstream behind it. */
class ProxySemanticsTest extends GatewayTest {

  @Test
  void aMethodThatIsNotCoveredPassesThroughUntouchedEveryTime() throws Exception {
    client.get("/payments/get-twice");
    HttpResponse<String> second = client.get("/payments/get-twice");

    assertThat(second.statusCode()).isEqualTo(201);
    assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(gw.upstream.runs("/payments/get-twice")).isEqualTo(2);
  }

  @Test
  void aPostWithoutAKeyOnAnOptionalRouteIsForwardedAndNotRecorded() throws Exception {
    client.postJson("/payments/no-key", null, "{}");
    client.postJson("/payments/no-key", null, "{}");

    assertThat(gw.upstream.runs("/payments/no-key")).isEqualTo(2);
  }

  @Test
  void aPostWithoutAKeyOnARequiredRouteIsRefusedBeforeTheUpstream() throws Exception {
    HttpResponse<String> response = client.postJson("/required/payments", null, "{}");

    assertProblem(response, ProblemType.KEY_MISSING);
    assertThat(gw.upstream.runs("/required/payments")).isZero();
  }

  @Test
  void aMalformedKeyIsRefusedBeforeTheUpstream() throws Exception {
    HttpResponse<String> tooLong = client.postJson("/payments/malformed", "k".repeat(256), "{}");
    HttpResponse<String> badSfString = client.postJson("/payments/malformed", "\"unterminated", "{}");

    assertProblem(tooLong, ProblemType.KEY_INVALID);
    assertProblem(badSfString, ProblemType.KEY_INVALID);
    assertThat(gw.upstream.runs("/payments/malformed")).isZero();
  }

  @Test
  void aRetryReplaysTheOriginalStatusBodyAndHeadersWithoutReachingTheUpstream() throws Exception {
    String key = key();

    HttpResponse<String> first = client.postJson("/payments/replay", key, "{\"amount\":100}");
    HttpResponse<String> retry = client.postJson("/payments/replay", key, "{\"amount\":100}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
    assertThat(retry.headers().allValues("X-Multi")).containsExactly("one", "two");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(retry.headers().firstValue("Set-Cookie")).as("never replayed").isEmpty();
    assertThat(gw.upstream.runs("/payments/replay")).isEqualTo(1);
  }

  @Test
  void aRetrySpelledWithTheQuotedSfStringFormIsTheSameKey() throws Exception {
    String key = key();

    client.postJson("/payments/quoted", key, "{}");
    HttpResponse<String> retry = client.postJson("/payments/quoted", "\"" + key + "\"", "{}");

    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(gw.upstream.runs("/payments/quoted")).isEqualTo(1);
  }

  @Test
  void theUpstreamSeesOneSpellingOfTheKeyWhicheverTheClientSent() throws Exception {
    String key = key();

    HttpResponse<String> quoted = client.postJson("/headers", "\"" + key + "\"", "{}");
    HttpResponse<String> bare = client.postJson("/headers", key(), "{}");

    assertThat(quoted.body()).startsWith("key=" + key + " scope=");
    assertThat(bare.body()).doesNotContain("\"");
  }

  @Test
  void fieldsTheUpstreamNamesInConnectionNeverReachTheClientNorAReplay() throws Exception {
    try (RawUpstream upstream = new RawUpstream("HTTP/1.1 201 Created\r\nConnection: X-Hop, keep-alive\r\n"
        + "X-Hop: hop-secret\r\nKeep-Alive: timeout=5\r\nX-End: kept\r\nContent-Type: application/json\r\n"
        + "Content-Length: 2\r\n\r\n{}");
        TestGateway hop = TestGateway.start("--upstream", upstream.url())) {
      String key = key();

      HttpResponse<String> first = hop.client.postJson("/payments/hop", key, "{}");
      HttpResponse<String> replay = hop.client.postJson("/payments/hop", key, "{}");

      for (HttpResponse<String> r : List.of(first, replay)) {
        assertThat(r.statusCode()).isEqualTo(201);
        assertThat(r.headers().firstValue("X-End")).contains("kept");
        assertThat(r.headers().firstValue("X-Hop")).isEmpty();
        assertThat(r.headers().firstValue("Keep-Alive")).isEmpty();
      }
      assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(upstream.runs(key)).isEqualTo(1);
    }
  }

  @Test
  void theSameJsonWrittenDifferentlyIsTheSameRequest() throws Exception {
    String key = key();

    client.postJson("/payments/canonical", key, "{\"a\":1,\"b\":[1,2]}");
    HttpResponse<String> retry = client.postJson("/payments/canonical", key, "{ \"b\" : [1,2], \"a\" : 1.0 }");

    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void excludedJsonPointersDoNotMakeARetryDifferent() throws Exception {
    String key = key();

    client.postJson("/stamped/payments", key, "{\"amount\":1,\"sent_at\":\"10:00\"}");
    HttpResponse<String> retry = client.postJson("/stamped/payments", key, "{\"amount\":1,\"sent_at\":\"10:05\"}");

    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(gw.upstream.runs("/stamped/payments")).isEqualTo(1);
  }

  @Test
  void aRetryWithADifferentBodyIsRefusedAndNeverSeesTheFirstResult() throws Exception {
    String key = key();
    client.postJson("/payments/mismatch", key, "{\"amount\":100}");

    HttpResponse<String> reused = client.postJson("/payments/mismatch", key, "{\"amount\":999}");

    assertProblem(reused, ProblemType.KEY_REUSED);
    assertThat(reused.body()).doesNotContain("pay_");
    assertThat(gw.upstream.runs("/payments/mismatch")).isEqualTo(1);
  }

  @Test
  void theSameKeyFromAnotherTenantIsAnotherRecord() throws Exception {
    String key = key();

    client.postJson("/payments/tenants", key, "{}", "Api-Key", "merchant-a");
    HttpResponse<String> other = client.postJson("/payments/tenants", key, "{}", "Api-Key", "merchant-b");

    assertThat(other.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(gw.upstream.runs("/payments/tenants")).isEqualTo(2);
  }

  @Test
  void aRequestNamingTwoDifferentTenantsIsRefusedBeforeTheUpstream() throws Exception {
    HttpRequest.Builder twoTenants = client.post("/payments/two-tenants", key(), "{}", "Api-Key", "merchant-a")
        .header("Api-Key", "merchant-b");

    assertProblem(client.send(twoTenants), ProblemType.TENANT_AMBIGUOUS);
    assertThat(gw.upstream.runs("/payments/two-tenants")).isZero();
  }

  @Test
  void withRequireTenantAKeyedRequestWithoutTheTenantIsRefused() throws Exception {
    try (TestGateway strict = TestGateway.start("--require-tenant", "true")) {
      HttpRequest.Builder anonymous = HttpRequest.newBuilder(strict.gateway.uri().resolve("/payments/anonymous"))
          .header("Idempotency-Key", key()).POST(HttpRequest.BodyPublishers.ofString("{}"));

      assertProblem(strict.client.send(anonymous), ProblemType.TENANT_MISSING);
      assertThat(strict.client.postJson("/payments/anonymous", key(), "{}").statusCode()).isEqualTo(201);
      assertThat(strict.upstream.runs("/payments/anonymous")).isEqualTo(1);
    }
  }

  @Test
  void aDuplicateWhileTheFirstIsInFlightGets409WithRetryAfter() throws Exception {
    String key = key();
    CompletableFuture<HttpResponse<String>> first = client.sendAsync(client.post("/slow/800", key, "{}"));
    Thread.sleep(300);

    HttpResponse<String> duplicate = client.postJson("/slow/800", key, "{}");

    assertProblem(duplicate, ProblemType.IN_FLIGHT);
    assertThat(duplicate.headers().firstValue("Retry-After")).hasValueSatisfying(v -> assertThat(Integer.parseInt(v)).isPositive());
    assertThat(first.get().statusCode()).isEqualTo(201);
    assertThat(gw.upstream.runs("/slow/800")).isEqualTo(1);
  }

  @Test
  void inWaitModeADuplicateHerdIsHeldAndGetsTheFirstResponse() throws Exception {
    String key = key();
    List<CompletableFuture<HttpResponse<String>>> herd = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      herd.add(client.sendAsync(client.post("/wait/slow/300", key, "{}")));
    }

    List<String> bodies = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> f : herd) {
      HttpResponse<String> r = f.get();
      assertThat(r.statusCode()).isEqualTo(201);
      bodies.add(r.body());
    }

    assertThat(bodies).containsOnly(bodies.get(0));
    assertThat(gw.upstream.runs("/wait/slow/300")).isEqualTo(1);
  }

  @Test
  void aHerdWaitingOnOneKeyHoldsNoThreadOtherRequestsNeed() throws Exception {
    try (TestGateway few = TestGateway.start("--store-threads", "2")) {
      String key = key();
      List<CompletableFuture<HttpResponse<String>>> herd = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        herd.add(few.client.sendAsync(few.client.post("/wait/slow/1000", key, "{}")));
      }
      awaitRuns(few, "/wait/slow/1000");

      HttpResponse<String> other = few.client.postJson("/payments/beside-the-herd", key(), "{}");

      assertThat(other.statusCode()).isEqualTo(201);
      assertThat(herd).as("the herd still waits").noneMatch(CompletableFuture::isDone);
      for (CompletableFuture<HttpResponse<String>> r : herd) {
        assertThat(r.get().statusCode()).isEqualTo(201);
      }
      assertThat(few.upstream.runs("/wait/slow/1000")).isEqualTo(1);
    }
  }

  private static void awaitRuns(TestGateway gw, String path) throws InterruptedException {
    long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
    while (gw.upstream.runs(path) == 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
  }

  @Test
  void anUpstream5xxIsPassedThroughAndReleasesTheKey() throws Exception {
    String key = key();

    HttpResponse<String> first = client.postJson("/status/503", key, "{}");
    HttpResponse<String> retry = client.postJson("/status/503", key, "{}");

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(retry.statusCode()).isEqualTo(503);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(gw.upstream.runs("/status/503")).isEqualTo(2);
  }

  @Test
  void anUpstream429Or408IsTransientToo() throws Exception {
    for (String status : List.of("429", "408")) {
      String key = key();
      client.postJson("/status/" + status, key, "{}");
      client.postJson("/status/" + status, key, "{}");
      assertThat(gw.upstream.runs("/status/" + status)).as(status).isEqualTo(2);
    }
  }

  @Test
  void anUpstream4xxIsAFinalFailureAndIsReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first = client.postJson("/status/402", key, "{}");
    HttpResponse<String> retry = client.postJson("/status/402", key, "{}");

    assertThat(first.statusCode()).isEqualTo(402);
    assertThat(retry.statusCode()).isEqualTo(402);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(gw.upstream.runs("/status/402")).isEqualTo(1);
  }

  @Test
  void aResponseOverTheCapIsDeliveredOnceAndItsRetriesAre409ResponseUnavailable() throws Exception {
    String key = key();

    HttpResponse<String> first = client.postJson("/small/big/10000", key, "{}");
    HttpResponse<String> retry = client.postJson("/small/big/10000", key, "{}");

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(10_000);
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(gw.upstream.runs("/small/big/10000")).isEqualTo(1);
  }

  @Test
  void aRequestBodyOverTheLimitIs413AndNeverReachesTheUpstream() throws Exception {
    HttpResponse<String> response = client.postJson("/small/payments", key(), "{\"pad\":\"" + "x".repeat(2000) + "\"}");

    assertProblem(response, ProblemType.BODY_TOO_LARGE);
    assertThat(gw.upstream.runs("/small/payments")).isZero();
  }

  @Test
  void putIsCoveredWhereTheRouteSaysSo() throws Exception {
    String key = key();
    HttpRequest.Builder put = client.post("/puts/thing", key, "{}").method("PUT", HttpRequest.BodyPublishers.ofString("{}"));

    client.send(put);
    HttpResponse<String> retry = client.send(put);

    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(gw.upstream.runs("/puts/thing")).isEqualTo(1);
  }

  @Test
  void theKeyScopeAndFencingTokenGoUpstreamAndClientsCannotForgeThem() throws Exception {
    String key = key();

    HttpResponse<String> response = client.postJson("/headers", key, "{}", "Once-Token", "999999", "Once-Scope", "forged");

    assertThat(response.body()).startsWith("key=" + key + " scope=sha256:");
    assertThat(response.body()).doesNotContain("forged").doesNotContain("999999").matches(".* token=[1-9][0-9]*");
  }

  @Test
  void anUnguardedRequestCarriesNoScopeOrToken() throws Exception {
    HttpResponse<String> response = client.postJson("/headers", null, "{}", "Once-Token", "999999");

    assertThat(response.body()).isEqualTo("key=null scope=null token=null");
  }
}

package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.tck.Eventually;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * What DESIGN §4 asks of a proxy beyond the rows every adapter passes (those run through the
 * contract kit in {@link GatewaySemanticsTest}): one spelling of the key upstream, hop-by-hop
 * fields on live answers, the tenant requirement, herds in wait mode, and the headers the upstream
 * is given.
 */
class ProxySemanticsTest extends GatewayTest {

  @Test
  void theUpstreamSeesOneSpellingOfTheKeyWhicheverTheClientSent() throws Exception {
    String key = key();

    HttpResponse<String> quoted = client.postJson("/headers", "\"" + key + "\"", "{}");
    HttpResponse<String> bare = client.postJson("/headers", key(), "{}");

    assertThat(quoted.body()).startsWith("key=" + key + " scope=");
    assertThat(bare.body()).doesNotContain("\"");
  }

  @Test
  void aRoutesOwnKeyHeaderGoesUpstreamUnderItsNameInOneSpelling() throws Exception {
    String key = key();

    HttpResponse<String> first =
        client.postJson("/vendor/headers", null, "{}", "X-Idempotency-Key", "\"" + key + "\"");
    HttpResponse<String> replay =
        client.postJson("/vendor/headers", null, "{}", "X-Idempotency-Key", key);

    assertThat(first.body())
        .startsWith("key=null scope=")
        .endsWith(" vendor-key=" + key + " traceparent=null");
    assertThat(first.body()).doesNotContain("token=null");
    assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void withRoutesCoverageOnlyTheYamlRoutesAreGuarded() throws Exception {
    try (TestGateway routesOnly = TestGateway.start("--coverage", "routes")) {
      String key = key();
      routesOnly.client.postJson("/payments/elsewhere", key, "{}");
      HttpResponse<String> again = routesOnly.client.postJson("/payments/elsewhere", key, "{}");

      assertThat(again.statusCode()).isEqualTo(201);
      assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
      assertThat(routesOnly.upstream.runs("/payments/elsewhere"))
          .as("a path no route matches is not guarded")
          .isEqualTo(2);

      String guarded = "/stamped/payments/guarded";
      routesOnly.client.postJson(guarded, key, "{}");
      HttpResponse<String> replay = routesOnly.client.postJson(guarded, key, "{}");

      assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(routesOnly.upstream.runs(guarded)).isEqualTo(1);
    }
  }

  @Test
  void theClientsTraceContextReachesTheUpstreamSoItsSpansJoinTheTrace() throws Exception {
    String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    HttpResponse<String> response =
        client.postJson("/headers", key(), "{}", "traceparent", traceparent);

    assertThat(response.body()).endsWith(" traceparent=" + traceparent);
  }

  @Test
  void fieldsTheUpstreamNamesInConnectionNeverReachTheClientNorAReplay() throws Exception {
    try (RawUpstream upstream =
            new RawUpstream(
                "HTTP/1.1 201 Created\r\nConnection: X-Hop, keep-alive\r\n"
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
  void withRequireTenantAKeyedRequestWithoutTheTenantIsRefused() throws Exception {
    try (TestGateway strict = TestGateway.start("--require-tenant", "true")) {
      HttpRequest.Builder anonymous =
          HttpRequest.newBuilder(strict.gateway.uri().resolve("/payments/anonymous"))
              .header("Idempotency-Key", key())
              .POST(HttpRequest.BodyPublishers.ofString("{}"));

      assertProblem(strict.client.send(anonymous), ProblemType.TENANT_MISSING);
      assertThat(strict.client.postJson("/payments/anonymous", key(), "{}").statusCode())
          .isEqualTo(201);
      assertThat(strict.upstream.runs("/payments/anonymous")).isEqualTo(1);
    }
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

  private static void awaitRuns(TestGateway gw, String path) {
    Eventually.assertThat(
        path + " reached the upstream",
        java.time.Duration.ofSeconds(20),
        () -> gw.upstream.runs(path) > 0);
  }

  @Test
  void theKeyScopeAndFencingTokenGoUpstreamAndClientsCannotForgeThem() throws Exception {
    String key = key();

    HttpResponse<String> response =
        client.postJson("/headers", key, "{}", "Once-Token", "999999", "Once-Scope", "forged");

    assertThat(response.body()).startsWith("key=" + key + " scope=sha256:");
    assertThat(response.body())
        .doesNotContain("forged")
        .doesNotContain("999999")
        .matches(".* token=[1-9][0-9]* vendor-key=null traceparent=null");
  }

  @Test
  void anUnguardedRequestCarriesNoScopeOrToken() throws Exception {
    HttpResponse<String> response = client.postJson("/headers", null, "{}", "Once-Token", "999999");

    assertThat(response.body())
        .isEqualTo("key=null scope=null token=null vendor-key=null traceparent=null");
  }
}

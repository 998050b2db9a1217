package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.store.IdempotencyRecord;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/security.md, through the running gateway: secrets and bodies never reach logs or metrics,
 * every admin action is audited, results are encrypted at rest, and one tenant's burst of new keys
 * is limited without touching anyone else.
 */
@Timeout(90)
class SecurityTest {

  static final String TOKEN = "admin-token-for-security-test-0123";
  static final String SECRET_API_KEY = "sk_live_SECRET_51HbXq9";
  static final String BODY_MARKER = "BODY-MARKER-4242424242424242";
  static final String K1 = "k1:" + Base64.getEncoder().encodeToString(new byte[32]);
  static final String K2 =
      "k2:"
          + Base64.getEncoder()
              .encodeToString(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});

  @Test
  void secretsBodiesAndTheAdminTokenNeverReachLogsOrMetrics() throws Exception {
    String output;
    String metrics;
    try (RecordingOutput recording = new RecordingOutput()) {
      // Read once the gateway has stopped: it writes the access lines still waiting then.
      try (TestGateway gw = TestGateway.start("--access-log", "true", "--admin-token", TOKEN)) {
        String key = key();
        String body = "{\"note\":\"" + BODY_MARKER + "\"}";
        gw.client.postJson("/payments/secret", key, body, "Api-Key", SECRET_API_KEY);
        gw.client.postJson("/payments/secret", key, body, "Api-Key", SECRET_API_KEY); // replay
        gw.client.postJson(
            "/payments/secret", key, "{\"other\":1}", "Api-Key", SECRET_API_KEY); // 422
        gw.client.postJson("/required/x", null, body, "Api-Key", SECRET_API_KEY); // 400
        gw.client.postJson("/small/x", key(), body.repeat(100), "Api-Key", SECRET_API_KEY); // 413
        gw.client.postJson(
            "/payments/x?api_key=" + SECRET_API_KEY, key(), body, "Api-Key", SECRET_API_KEY);
        gw.client.postJson(
            "/status/500",
            key(),
            body,
            "Api-Key",
            SECRET_API_KEY,
            "Authorization",
            "Bearer " + SECRET_API_KEY);
        gw.management()
            .send(admin("/admin/purge", TOKEN).POST(HttpRequest.BodyPublishers.noBody()));
        gw.management()
            .send(
                admin("/admin/purge", TOKEN + "-wrong").POST(HttpRequest.BodyPublishers.noBody()));
        metrics = gw.management().get("/metrics").body();
      }
      output = recording.text();
    }

    assertThat(output)
        .contains("INFO access - method=POST", "status=201", "replayed=true", "action=POST /purge")
        // The shape of every other log line: time to the millisecond with its offset, level,
        // logger.
        .containsPattern(
            "(?m)^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}(Z|[+-]\\d{2}:\\d{2}) INFO access"
                + " - method=POST path=/payments/secret status=201 replayed=true"
                + " duration_ms=\\d+\\.\\d{3} port=\\d+$");
    // The access lines' time is written like slf4j-simple's (simplelogger.properties): the same
    // shape as the gateway's own start line in the same output.
    assertThat(timeShapes(output, " INFO access - "))
        .isNotEmpty()
        .isEqualTo(timeShapes(output, " INFO Gateway - once-gateway started"));
    // Where dropped access lines are counted, with none dropped here.
    assertThat(metrics)
        .containsPattern("(?m)^once_gateway_access_lines_dropped_total(\\{[^}]*\\})? 0(\\.0)?$");
    for (String secret : List.of(SECRET_API_KEY, BODY_MARKER, TOKEN)) {
      assertThat(output).as("log output").doesNotContain(secret);
      assertThat(metrics).as("metrics").doesNotContain(secret);
    }
  }

  @Test
  void everyAdminActionIsAuditedWithWhoWhatAndWhenButNeverTheToken() throws Exception {
    List<String> audit;
    try (RecordingOutput recording = new RecordingOutput();
        TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      String key = key();
      gw.client.postJson("/payments/audited", key, "{}");
      String query =
          "?scope=" + URLEncoder.encode(scopeOf(gw), StandardCharsets.UTF_8) + "&key=" + key;
      gw.management().send(admin("/admin/records" + query, TOKEN).GET());
      gw.management()
          .send(
              admin("/admin/records/release" + query, TOKEN)
                  .POST(HttpRequest.BodyPublishers.noBody()));
      gw.management().send(admin("/admin/purge", TOKEN).POST(HttpRequest.BodyPublishers.noBody()));
      gw.management().send(admin("/admin/nothing", TOKEN).GET());
      gw.management().send(admin("/admin/purge", null).POST(HttpRequest.BodyPublishers.noBody()));
      audit = recording.text().lines().filter(l -> l.contains("audit")).toList();
    }

    assertThat(audit).hasSize(5);
    assertThat(audit.get(0)).contains("action=get", "result=found", "key=");
    assertThat(audit.get(1)).contains("action=release", "result=not-in-progress");
    assertThat(audit.get(2)).contains("action=purge", "result=purged");
    assertThat(audit.get(3)).contains("result=unknown-action");
    assertThat(audit.get(4)).contains("action=POST /purge", "result=denied");
    assertThat(audit)
        .allSatisfy(
            line -> {
              assertThat(line)
                  .matches("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}.*"); // when
              assertThat(line).contains("remote=127.0.0.1"); // who
              assertThat(line).doesNotContain(TOKEN).doesNotContain("Bearer");
            });
  }

  @Test
  void anAdminCallWithAMalformedScopeOrKeyIsAuditedToo() throws Exception {
    List<String> audit;
    HttpResponse<String> malformed;
    try (RecordingOutput recording = new RecordingOutput();
        TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      malformed =
          gw.management()
              .send(
                  admin(
                          "/admin/records?scope=s&key="
                              + URLEncoder.encode("bad key\n", StandardCharsets.UTF_8),
                          TOKEN)
                      .GET());
      gw.management()
          .send(admin("/admin/records/release", TOKEN).POST(HttpRequest.BodyPublishers.noBody()));
      audit = recording.text().lines().filter(l -> l.contains("audit")).toList();
    }

    assertThat(malformed.statusCode()).isEqualTo(400);
    assertThat(audit).hasSize(2);
    assertThat(audit.get(0))
        .contains("action=get", "result=malformed-scope-or-key", "remote=127.0.0.1")
        .doesNotContain("bad key");
    assertThat(audit.get(1)).contains("action=release", "result=missing-scope-or-key");
  }

  @Test
  void responsesAreReplayedFromCiphertextThatHoldsNoBody() throws Exception {
    try (TestGateway gw = TestGateway.start("--encryption-keys", K1)) {
      String key = key();
      HttpResponse<String> first = gw.client.postJson("/payments/sealed", key, "{\"amount\":1}");
      HttpResponse<String> replay = gw.client.postJson("/payments/sealed", key, "{\"amount\":1}");

      assertThat(replay.body()).isEqualTo(first.body()).contains("pay_");
      assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
      IdempotencyRecord raw =
          gw.gateway
              .store()
              .get(
                  dev.once.store.RecordId.of(
                      new dev.once.Scope(scopeOf(gw)), dev.once.IdempotencyKey.of(key)))
              .orElseThrow();
      assertThat(new String(raw.result(), StandardCharsets.ISO_8859_1))
          .doesNotContain("pay_")
          .contains("k1");
    }
  }

  @Test
  void aResponseWhoseKeyWasDroppedIsUnavailableAndNeverRunAgain() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream()) {
      Path dir = Files.createTempDirectory("once-gateway-keys-");
      String key = key();
      try {
        try (Gateway before =
            Gateway.start(TestGateway.config(dir, upstream.url(), "--encryption-keys", K1))) {
          assertThat(new Client(before.uri()).postJson("/payments/rotated", key, "{}").statusCode())
              .isEqualTo(201);
        }
        try (Gateway rotated =
            Gateway.start(
                TestGateway.config(dir, upstream.url(), "--encryption-keys", K2 + "," + K1))) {
          assertThat(
                  new Client(rotated.uri())
                      .postJson("/payments/rotated", key, "{}")
                      .headers()
                      .firstValue("Idempotent-Replayed"))
              .contains("true");
        }
        try (Gateway dropped =
            Gateway.start(TestGateway.config(dir, upstream.url(), "--encryption-keys", K2))) {
          assertProblem(
              new Client(dropped.uri()).postJson("/payments/rotated", key, "{}"),
              ProblemType.RESPONSE_UNAVAILABLE);
        }
        assertThat(upstream.runs("/payments/rotated")).isEqualTo(1);
      } finally {
        TestGateway.delete(dir);
      }
    }
  }

  @Test
  void oneTenantsBurstOfNewKeysIsLimitedWithoutLimitingItsRetriesOrOtherTenants() throws Exception {
    try (TestGateway gw =
        TestGateway.start("--new-keys-per-second", "0.5", "--new-keys-burst", "2")) {
      String first = key();
      gw.client.postJson("/payments/limited", first, "{}");
      gw.client.postJson("/payments/limited", key(), "{}");

      HttpResponse<String> third = gw.client.postJson("/payments/limited", key(), "{}");
      assertProblem(third, ProblemType.RATE_LIMITED);
      assertThat(third.headers().firstValue("Retry-After"))
          .hasValueSatisfying(s -> assertThat(Long.parseLong(s)).isPositive());

      assertThat(
              gw.client
                  .postJson("/payments/limited", first, "{}")
                  .headers()
                  .firstValue("Idempotent-Replayed"))
          .contains("true");
      assertThat(
              gw.client
                  .postJson("/payments/limited", key(), "{}", "Api-Key", "sk_other_tenant")
                  .statusCode())
          .isEqualTo(201);
      assertThat(gw.upstream.runs("/payments/limited")).isEqualTo(3);
    }
  }

  /** The scope of the default route for {@link Client#MERCHANT}, as the upstream is told it. */
  static String scopeOf(TestGateway gw) throws Exception {
    String body = gw.client.postJson("/headers", key(), "{}").body();
    return body.substring(body.indexOf("scope=") + 6, body.indexOf(" token="));
  }

  private static HttpRequest.Builder admin(String path, String token) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(java.net.URI.create("http://placeholder" + path));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return b;
  }

  /** The shapes (every digit a 9) of the times that begin the lines holding {@code marker}. */
  private static Set<String> timeShapes(String output, String marker) {
    return output
        .lines()
        .filter(l -> l.contains(marker))
        .map(l -> l.substring(0, l.indexOf(' ')).replaceAll("[0-9]", "9"))
        .collect(Collectors.toSet());
  }
}

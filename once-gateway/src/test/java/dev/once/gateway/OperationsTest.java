package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.tck.Eventually;
import dev.once.tck.RequiredServices;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Health, metrics, the admin API and graceful shutdown, on the management port. */
@Timeout(60)
class OperationsTest {

  static final String TOKEN = "admin-token-for-tests-0123456789";

  @Test
  void healthIsUpWhenTheStoreAnswers() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      HttpResponse<String> health = gw.management().get("/health");

      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).contains("\"status\":\"UP\"");
    }
  }

  @Test
  void metricsCountWhatHappenedToEachKeyAndShowStoreCallsJvmAndTheCore() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String key = key();
      gw.client.postJson("/payments/metrics", key, "{}"); // executed, recorded
      gw.client.postJson("/payments/metrics", key, "{}"); // replayed
      gw.client.postJson("/payments/metrics", key, "{\"other\":1}"); // key reused
      gw.client.postJson("/status/503", key(), "{}"); // executed, released

      String metrics = gw.management().get("/metrics").body();

      assertThat(
              value(metrics, "once_executions_total{outcome=\"completed\",recording=\"recorded\"}"))
          .isEqualTo(1.0);
      assertThat(
              value(metrics, "once_executions_total{outcome=\"transient\",recording=\"released\"}"))
          .isEqualTo(1.0);
      assertThat(value(metrics, "once_replays_total{outcome=\"completed\"}")).isEqualTo(1.0);
      assertThat(value(metrics, "once_fingerprint_mismatches_total")).isEqualTo(1.0);
      assertThat(value(metrics, "once_store_calls_seconds_count{operation=\"claim\"}"))
          .isEqualTo(4.0);
      assertThat(value(metrics, "once_store_calls_seconds_count{operation=\"complete\"}"))
          .isEqualTo(1.0);
      assertThat(
              value(
                  metrics,
                  "http_server_requests_seconds_count{method=\"POST\",replayed=\"true\",status=\"201\"}"))
          .isEqualTo(1.0);
      assertThat(metrics)
          .contains(
              "jvm_memory_used_bytes{area=\"heap\"",
              TestCore.netty() ? "netty_eventexecutor_tasks_pending" : "jetty_threads_busy");
    }
  }

  /** The value of one series in the Prometheus text format. */
  private static double value(String metrics, String series) {
    return metrics
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .findFirst()
        .map(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
        .orElseThrow(() -> new AssertionError("no series " + series + " in\n" + metrics));
  }

  @Test
  void managementPathsAreNeverShadowingTheUpstreamsOwn() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      HttpResponse<String> upstreamHealth = gw.client.get("/health");

      assertThat(upstreamHealth.body()).contains("pay_");
    }
  }

  /**
   * Redis expires records by itself, and a purge there is a pass over every key under the prefix:
   * the gateway runs one only when asked, never every {@code purge-interval}. Redis's MONITOR shows
   * every SCAN under this gateway's own prefix.
   */
  @Test
  void onRedisTheGatewayPurgesOnlyWhenAsked() throws Exception {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    String table = "once_purge_" + UUID.randomUUID().toString().replace("-", "");
    List<String> scans = new CopyOnWriteArrayList<>();
    try (Socket monitor = new Socket("127.0.0.1", 6379)) {
      monitor.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
      BufferedReader lines =
          new BufferedReader(
              new InputStreamReader(monitor.getInputStream(), StandardCharsets.ISO_8859_1));
      assertThat(lines.readLine()).isEqualTo("+OK");
      Thread reader =
          new Thread(
              () -> {
                try {
                  for (String line; (line = lines.readLine()) != null; ) {
                    if (line.contains("\"SCAN\"") && line.contains(table)) {
                      scans.add(line);
                    }
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              });
      reader.setDaemon(true);
      reader.start();
      try (TestGateway gw =
          TestGateway.start(
              "--store",
              "redis://127.0.0.1:6379",
              "--store-table",
              table,
              "--purge-interval",
              "1s",
              "--admin-token",
              TOKEN)) {
        Thread.sleep(2_500); // a round at the start, and two more intervals

        assertThat(scans).as("scans before anyone asked").isEmpty();

        HttpResponse<String> purged =
            gw.management()
                .send(admin("/admin/purge", TOKEN).POST(HttpRequest.BodyPublishers.noBody()));
        assertThat(purged.body()).isEqualTo("{\"purged\":0}");
        Eventually.assertThat(
            "the purge asked for scanned", Duration.ofSeconds(5), () -> !scans.isEmpty());
      }
    }
  }

  @Test
  void theAdminApiIsOffWithoutAToken() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      assertThat(
              gw.management()
                  .send(admin("/admin/purge", null).POST(HttpRequest.BodyPublishers.noBody()))
                  .statusCode())
          .isEqualTo(404);
    }
  }

  @Test
  void theAdminApiRefusesAMissingOrWrongToken() throws Exception {
    try (TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      HttpRequest.Builder none =
          admin("/admin/purge", null).POST(HttpRequest.BodyPublishers.noBody());
      HttpRequest.Builder wrong =
          admin("/admin/purge", TOKEN + "x").POST(HttpRequest.BodyPublishers.noBody());

      assertThat(gw.management().send(none).statusCode()).isEqualTo(401);
      assertThat(gw.management().send(wrong).statusCode()).isEqualTo(401);
    }
  }

  @Test
  void anAdminCanInspectAStuckKeyWithoutItsBodyForceReleaseItAndPurge() throws Exception {
    try (TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      String scope = scopeOfTheDefaultRoute(gw);
      String key = key();
      assertProblem(gw.client.postJson("/slow/2500", key, "{}"), 504, "upstream-timeout");
      assertProblem(gw.client.postJson("/slow/2500", key, "{}"), ProblemType.IN_FLIGHT);
      String query = "?scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8) + "&key=" + key;

      HttpResponse<String> record =
          gw.management().send(admin("/admin/records" + query, TOKEN).GET());
      HttpResponse<String> released =
          gw.management()
              .send(
                  admin("/admin/records/release" + query, TOKEN)
                      .POST(HttpRequest.BodyPublishers.noBody()));
      HttpResponse<String> purged =
          gw.management()
              .send(admin("/admin/purge", TOKEN).POST(HttpRequest.BodyPublishers.noBody()));

      assertThat(record.statusCode()).isEqualTo(200);
      assertThat(record.body())
          .contains("\"state\":\"IN_PROGRESS\"")
          .containsPattern("\"token\":\"[0-9]+\"")
          .contains("\"resultBytes\":null");
      assertThat(released.body()).matches("\\{\"result\":\"released\",\"token\":\"[0-9]+\"\\}");
      assertThat(purged.body()).startsWith("{\"purged\":");
      // Released: the next retry runs afresh (and times out again, as the upstream is still slow).
      assertProblem(gw.client.postJson("/slow/2500", key, "{}"), 504, "upstream-timeout");
      assertThat(gw.upstream.runs("/slow/2500")).isEqualTo(2);
    }
  }

  @Test
  void anAdminListsKeysStuckInProgressOldestFirstWithHowLongTheyHaveRun() throws Exception {
    try (TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      String scope = scopeOfTheDefaultRoute(gw);
      String stuck = key();
      assertProblem(gw.client.postJson("/slow/2500", stuck, "{}"), 504, "upstream-timeout");
      gw.client.postJson("/payments/done", key(), "{}"); // completed: never listed

      HttpResponse<String> all =
          gw.management()
              .send(admin("/admin/records/in-flight?older-than=0s&limit=100", TOKEN).GET());
      HttpResponse<String> older =
          gw.management()
              .send(admin("/admin/records/in-flight?older-than=1h&limit=1", TOKEN).GET());

      assertThat(all.statusCode()).isEqualTo(200);
      assertThat(all.headers().firstValue("Content-Type")).hasValue("application/json");
      assertThat(all.body())
          .startsWith("{\"records\":[{\"scope\":" + dev.once.gateway.Logs.jsonString(scope))
          .contains("\"key\":\"" + stuck + "\"")
          .contains("\"state\":\"IN_PROGRESS\"")
          .contains("\"createdAt\":\"")
          .containsPattern("\"runningMillis\":[0-9]+[},]")
          .doesNotContain("COMPLETED")
          .endsWith("],\"complete\":true}");
      assertThat(older.body()).isEqualTo("{\"records\":[],\"complete\":true}");
    }
  }

  @Test
  void theInFlightListingRefusesAMissingOrBadBoundOrLimitWith400() throws Exception {
    try (TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      for (String query :
          new String[] {
            "",
            "?older-than=30s",
            "?limit=10",
            "?older-than=banana&limit=10",
            "?older-than=-5s&limit=10",
            "?older-than=PT-5S&limit=10",
            "?older-than=999999999999d&limit=10",
            "?older-than=30s&limit=0",
            "?older-than=30s&limit=1001",
            "?older-than=30s&limit=ten"
          }) {
        HttpResponse<String> bad =
            gw.management().send(admin("/admin/records/in-flight" + query, TOKEN).GET());

        assertThat(bad.statusCode()).as(query).isEqualTo(400);
        assertThat(bad.body()).as(query).startsWith("{\"error\":").doesNotContain("banana");
      }
      assertThat(
              gw.management()
                  .send(admin("/admin/records/in-flight?older-than=30s&limit=1000", null).GET())
                  .statusCode())
          .isEqualTo(401);
    }
  }

  @Test
  void aCompletedRecordIsShownWithoutItsBodyAndCannotBeReleased() throws Exception {
    try (TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      String scope = scopeOfTheDefaultRoute(gw);
      String key = key();
      gw.client.postJson("/payments/done", key, "{}");
      String query = "?scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8) + "&key=" + key;

      HttpResponse<String> record =
          gw.management().send(admin("/admin/records" + query, TOKEN).GET());
      HttpResponse<String> release =
          gw.management()
              .send(
                  admin("/admin/records/release" + query, TOKEN)
                      .POST(HttpRequest.BodyPublishers.noBody()));

      assertThat(record.body()).contains("\"state\":\"COMPLETED\"").doesNotContain("pay_");
      assertThat(release.statusCode()).isEqualTo(409);
      assertThat(release.body()).contains("not-in-progress");
    }
  }

  @Test
  void stoppingLetsARequestInFlightFinish() throws Exception {
    TestGateway gw = TestGateway.start();
    try {
      CompletableFuture<HttpResponse<String>> inFlight =
          gw.client.sendAsync(gw.client.post("/slow/1000", key(), "{}"));
      Eventually.assertThat(
          "the request reached the upstream",
          Duration.ofSeconds(10),
          () -> gw.upstream.runs("/slow/1000") == 1);

      gw.gateway.close();

      assertThat(inFlight.get().statusCode()).isEqualTo(201);
    } finally {
      gw.close();
    }
  }

  /**
   * A keep-alive connection between requests does not hold a stop up: it is closed as the stop
   * begins, while a request in flight on another connection still runs (each core; on Jetty's, the
   * connections keep their own idle timeout through a stop, so an idle one left open would hold the
   * stop for its whole timeout).
   */
  @Test
  void stoppingClosesAConnectionBetweenRequestsAtOnce() throws Exception {
    TestGateway gw = TestGateway.start();
    try (Socket idle = new Socket("127.0.0.1", gw.gateway.port())) {
      idle.setSoTimeout(20_000);
      idle.getOutputStream().write(rawPost("/payments/kept-alive", key(), "{}"));
      assertThat(readAnswer(idle.getInputStream())).startsWith("HTTP/1.1 201");
      CompletableFuture<HttpResponse<String>> inFlight =
          gw.client.sendAsync(gw.client.post("/slow/1200", key(), "{}"));
      Eventually.assertThat(
          "the request reached the upstream",
          Duration.ofSeconds(10),
          () -> gw.upstream.runs("/slow/1200") == 1);

      CompletableFuture<Void> stopped = CompletableFuture.runAsync(gw.gateway::close);

      assertThat(idle.getInputStream().read()).isEqualTo(-1);
      assertThat(inFlight).isNotDone();
      assertThat(inFlight.get().statusCode()).isEqualTo(201);
      stopped.get();
    } finally {
      gw.close();
    }
  }

  /**
   * A request whose body pauses across the stop, longer than a second (Jetty's own idle timeout for
   * a stop, which cut such a body), is read to its end and runs: it was in flight when the stop
   * began.
   */
  @Test
  void aBodyThatPausesAcrossTheStopIsStillRead() throws Exception {
    TestGateway gw = TestGateway.start();
    try (Socket client = new Socket("127.0.0.1", gw.gateway.port())) {
      client.setSoTimeout(20_000);
      byte[] request = rawPost("/payments/paused", key(), "{\"amount\":1}");
      int half = request.length - 6;
      client.getOutputStream().write(request, 0, half);
      Eventually.assertThat(
          "the gateway holds the first part of the body",
          Duration.ofSeconds(10),
          () -> buffered(gw) > 0);

      CompletableFuture<Void> stopped = CompletableFuture.runAsync(gw.gateway::close);
      Thread.sleep(1_500);
      client.getOutputStream().write(request, half, request.length - half);

      assertThat(readAnswer(client.getInputStream())).startsWith("HTTP/1.1 201");
      assertThat(gw.upstream.runs("/payments/paused")).isEqualTo(1);
      stopped.get();
    } finally {
      gw.close();
    }
  }

  /** What the gateway holds of request bodies; -1 if it cannot be read now. */
  private static long buffered(TestGateway gw) {
    try {
      return Client.bufferedBytes(gw.management());
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** A keyed JSON POST with its length, keeping the connection open. */
  private static byte[] rawPost(String path, String key, String json) {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    String head =
        "POST "
            + path
            + " HTTP/1.1\r\nHost: localhost\r\nIdempotency-Key: "
            + key
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + body.length
            + "\r\n\r\n";
    byte[] head8 = head.getBytes(StandardCharsets.US_ASCII);
    byte[] all = java.util.Arrays.copyOf(head8, head8.length + body.length);
    System.arraycopy(body, 0, all, head8.length, body.length);
    return all;
  }

  /** One answer's head and its body of {@code Content-Length} bytes, as text. */
  private static String readAnswer(java.io.InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the connection closed within the head: " + head);
      }
      head.append((char) b);
    }
    java.util.regex.Matcher length =
        java.util.regex.Pattern.compile("(?i)\r\ncontent-length: *(\\d+)").matcher(head);
    int n = length.find() ? Integer.parseInt(length.group(1)) : 0;
    return head + new String(in.readNBytes(n), StandardCharsets.UTF_8);
  }

  /** The scope the upstream is told for the default route: what the admin API is asked with. */
  static String scopeOfTheDefaultRoute(TestGateway gw) throws Exception {
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
}

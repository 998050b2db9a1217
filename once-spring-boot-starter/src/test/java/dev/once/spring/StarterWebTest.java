package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.spring.shop.FakeShopApplication;
import dev.once.spring.shop.OrdersController;
import dev.once.store.IdempotencyStore;
import dev.once.tck.Eventually;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * What the starter adds on Tomcat, over sockets: {@code @Idempotent} handlers, property routes,
 * deferred results, metrics and health. DESIGN §4's rows run through the contract kit in {@link
 * StarterSemanticsTest}.
 */
@SpringBootTest(
    classes = FakeShopApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "once.store.type=memory",
      "once.routes[0].pattern=/api/strict-notes",
      "once.routes[0].key-required=true",
      "management.endpoints.web.exposure.include=health,metrics",
      "management.endpoint.health.show-details=always"
    })
class StarterWebTest {

  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  @LocalServerPort int port;

  @Autowired OrdersController orders;

  @Autowired MeterRegistry registry;

  @Autowired IdempotencyStore storeBean;

  private static String key() {
    return UUID.randomUUID().toString();
  }

  private HttpRequest.Builder post(String path, String key, String json) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .header("Api-Key", "sk_shop_1")
            .POST(HttpRequest.BodyPublishers.ofString(json));
    return key == null ? b : b.header("Idempotency-Key", key);
  }

  private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anIdempotentHandlerRunsOnceAndItsRetryIsReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/orders", key, "{\"amount\":1000}"));
    HttpResponse<String> retry = send(post("/api/orders", key, "{ \"amount\" : 1000 }"));

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"));
    assertThat(retry.headers().firstValue("Content-Type"))
        .isEqualTo(first.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("application/json"));
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(orders.runs("create")).isEqualTo(1);
  }

  @Test
  void keyRequiredOnTheAnnotationRefusesARequestWithoutAKey() throws Exception {
    HttpResponse<String> r = send(post("/api/orders", null, "{\"amount\":1}"));

    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
    assertThat(r.body()).contains("idempotency-key-missing");
  }

  @Test
  void aRouteFromPropertiesAppliesItsPolicy() throws Exception {
    HttpResponse<String> r = send(post("/api/strict-notes", null, "{}"));

    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(orders.runs("strict-note")).isZero();
  }

  @Test
  void anUnannotatedHandlerGetsTheDefaults() throws Exception {
    String key = key();
    send(post("/api/notes", key, "\"hello\""));
    HttpResponse<String> retry = send(post("/api/notes", key, "\"hello\""));
    send(post("/api/notes", null, "\"hello\""));

    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(orders.runs("note")).isEqualTo(2);
  }

  @Test
  void anAnnotationOnASafeMethodIsIgnored() throws Exception {
    get("/api/orders/ord_1");
    get("/api/orders/ord_1");

    assertThat(orders.runs("show")).isEqualTo(2);
  }

  @Test
  void aPathVariableRouteWaitsForTheFirstAndReplays() throws Exception {
    String key = key();
    CompletableFuture<HttpResponse<String>> first =
        client.sendAsync(
            post("/api/orders/ord_9/refunds?ms=800", key, "{}").build(),
            HttpResponse.BodyHandlers.ofString());
    Eventually.assertThat(
        "the first holds the key", Duration.ofSeconds(20), () -> orders.runs("refund") > 0);

    HttpResponse<String> dup = send(post("/api/orders/ord_9/refunds?ms=800", key, "{}"));

    assertThat(dup.statusCode()).isEqualTo(201);
    assertThat(dup.body()).isEqualTo(first.get().body());
    assertThat(dup.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(orders.runs("refund")).isEqualTo(1);
  }

  @Test
  void aResponseStatusExceptionBecomesAProblemThatIsReplayedByteForByte() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/missing", key, "{}"));
    HttpResponse<String> retry = send(post("/api/missing", key, "{}"));

    assertThat(first.statusCode()).isEqualTo(404);
    assertThat(first.body()).contains("\"title\":\"Not Found\"").contains("no such order");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Content-Type"))
        .isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(orders.runs("missing")).isEqualTo(1);
  }

  @Test
  void aNotFoundOrMethodNotAllowedThatNoHandlerProducedIsNeverRecorded() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/nothing-is-mapped-here", key, "{}"));
    HttpResponse<String> retry = send(post("/api/nothing-is-mapped-here", key, "{}"));

    assertThat(first.statusCode()).isEqualTo(404);
    assertThat(retry.statusCode()).isEqualTo(404);
    assertThat(retry.headers().firstValue("Idempotent-Replayed"))
        .as("the router's 404 released the key: the retry was routed afresh")
        .isEmpty();

    String getOnly = key();
    HttpResponse<String> notAllowed = send(post("/api/orders/o-1", getOnly, "{}"));
    HttpResponse<String> notAllowedAgain = send(post("/api/orders/o-1", getOnly, "{}"));

    assertThat(notAllowed.statusCode()).isEqualTo(405);
    assertThat(notAllowedAgain.headers().firstValue("Idempotent-Replayed")).isEmpty();
  }

  @Test
  void aDeferredResultIsRecordedWhenItCompletes() throws Exception {
    String key = key();

    HttpResponse<String> first = send(post("/api/deferred", key, "{}"));
    HttpResponse<String> retry = send(post("/api/deferred", key, "{}"));

    assertThat(first.statusCode()).isEqualTo(202);
    assertThat(first.body()).contains("job_");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(orders.runs("deferred")).isEqualTo(1);
  }

  @Test
  void executionsAndReplaysAreCountedInMicrometer() throws Exception {
    String key = key();
    double before = registry.get("once.replays").tag("outcome", "completed").counter().count();
    double ran = executions("completed", "recorded");

    send(post("/api/orders", key, "{\"amount\":7}"));
    send(post("/api/orders", key, "{\"amount\":7}"));

    assertThat(registry.get("once.replays").tag("outcome", "completed").counter().count())
        .isEqualTo(before + 1);
    assertThat(executions("completed", "recorded"))
        .as("the handler's run, counted as an execute() call is")
        .isEqualTo(ran + 1);
    assertThat(registry.get("once.store.calls").tag("operation", "claim").timer().count())
        .isPositive();
    assertThat(get("/actuator/metrics/once.executions").statusCode()).isEqualTo(200);
  }

  private double executions(String outcome, String recording) {
    var counter =
        registry.find("once.executions").tag("outcome", outcome).tag("recording", recording);
    return counter.counter() == null ? 0 : counter.counter().count();
  }

  @Test
  void theStoreHealthIsReported() throws Exception {
    HttpResponse<String> health = get("/actuator/health/once");

    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body())
        .contains("\"status\":\"UP\"")
        .contains(storeBean.getClass().getSimpleName());
  }

  /**
   * docs/spring-boot.md's Health section shows the body this endpoint serves: the same fields,
   * nested the same way, with values of the same kinds (its store name is an example's).
   */
  @Test
  void theHealthBodyHasTheShapeTheDocsShow() throws Exception {
    Matcher shown =
        Pattern.compile("curl -s localhost:8080/actuator/health/once\n(\\{.*})\n")
            .matcher(Files.readString(Path.of("../docs/spring-boot.md")));
    assertThat(shown.find())
        .as("docs/spring-boot.md shows a curl of /actuator/health/once")
        .isTrue();
    ObjectMapper json = new ObjectMapper();

    JsonNode served = json.readTree(get("/actuator/health/once").body());

    assertThat(shape(served)).isEqualTo(shape(json.readTree(shown.group(1))));
    assertThat(served.get("details").get("store").asText())
        .isEqualTo(storeBean.getClass().getSimpleName());
  }

  /**
   * Field names and value kinds, recursively, in name order (Boot 4's Jackson 3 sorts them, Boot
   * 3's keeps the declared order); a status keeps its value.
   */
  private static String shape(JsonNode node) {
    if (node.isObject()) {
      StringBuilder out = new StringBuilder("{");
      java.util.SortedSet<String> names = new java.util.TreeSet<>();
      node.fieldNames().forEachRemaining(names::add);
      names.forEach(
          f ->
              out.append(f)
                  .append(':')
                  .append(f.equals("status") ? node.get(f).asText() : shape(node.get(f)))
                  .append(','));
      return out.append('}').toString();
    }
    return node.getNodeType().name();
  }
}

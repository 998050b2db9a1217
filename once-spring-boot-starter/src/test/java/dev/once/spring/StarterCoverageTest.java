package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.spring.shop.FakeShopApplication;
import dev.once.spring.shop.OrdersController;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * {@code once.coverage=routes}: only {@code @Idempotent} handlers and {@code once.routes} are
 * guarded; every other handler runs as if the starter were not there, key or no key.
 */
@SpringBootTest(
    classes = FakeShopApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "once.store.type=memory",
      "once.coverage=routes",
      "once.routes[0].pattern=/api/strict-notes",
      "once.routes[0].key-required=true"
    })
class StarterCoverageTest {

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @LocalServerPort int port;

  @Autowired OrdersController orders;

  private HttpResponse<String> post(String path, String key, String json) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .header("Api-Key", "sk_shop_1")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aHandlerNoRouteNamesRunsForEveryRequestEvenWithAKey() throws Exception {
    String key = UUID.randomUUID().toString();
    int before = orders.runs("note");

    post("/api/notes", key, "\"hello\"");
    HttpResponse<String> again = post("/api/notes", key, "\"hello\"");

    assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(orders.runs("note") - before).isEqualTo(2);
  }

  @Test
  void annotatedHandlersAndPropertyRoutesAreStillGuarded() throws Exception {
    String key = UUID.randomUUID().toString();

    post("/api/orders", key, "{\"amount\":5}");
    HttpResponse<String> replay = post("/api/orders", key, "{\"amount\":5}");

    assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");

    String strict = UUID.randomUUID().toString();
    int before = orders.runs("strict-note");
    post("/api/strict-notes", strict, "{}");
    HttpResponse<String> strictReplay = post("/api/strict-notes", strict, "{}");

    assertThat(strictReplay.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(orders.runs("strict-note") - before).isEqualTo(1);
  }
}

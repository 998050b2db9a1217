package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.http.ProblemType;
import dev.once.spring.reactive.FakeReactiveApplication;
import dev.once.webflux.OnceWebFilter;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter in a reactive application on Reactor Netty: {@link OnceReactiveAutoConfiguration}
 * installs {@link OnceWebFilter} from the same {@code once.*} properties as a servlet application
 * uses.
 */
class StarterReactiveTest {

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void aRetryIsReplayedAndTheHandlerRunsOnce() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      String key = UUID.randomUUID().toString();

      HttpResponse<String> first = send(app, post(app, "/api/payments", key, "{\"amount\":1}"));
      HttpResponse<String> retry = send(app, post(app, "/api/payments", key, "{\"amount\":1}"));

      assertThat(BootLine.runsOnNetty(app)).isTrue();
      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
      assertThat(retry.statusCode()).isEqualTo(201);
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(retry.headers().firstValue("Location"))
          .isEqualTo(first.headers().firstValue("Location"));
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(app.getBean(FakeReactiveApplication.PaymentsController.class).created())
          .isEqualTo(1);
    }
  }

  @Test
  void theRoutesComeFromTheOnceProperties() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      HttpResponse<String> noKey = send(app, post(app, "/api/payments", null, "{}"));

      assertThat(noKey.statusCode()).isEqualTo(ProblemType.KEY_MISSING.status());
      assertThat(noKey.body()).contains(ProblemType.KEY_MISSING.uri());
      assertThat(app.getBean(FakeReactiveApplication.PaymentsController.class).created()).isZero();
      assertThat(app.getBean(OnceWebFilter.class).getOrder()).isEqualTo(-5);
    }
  }

  @Test
  void anIdempotentWebFluxHandlerIsARouteOfItsOwn() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      String key = UUID.randomUUID().toString();

      HttpResponse<String> noKey = send(app, post(app, "/refunds/pay_1", null, "{}"));
      HttpResponse<String> first = send(app, post(app, "/refunds/pay_1", key, "{}"));
      HttpResponse<String> retry = send(app, post(app, "/refunds/pay_1", key, "{}"));

      assertThat(noKey.statusCode()).as("keyRequired = true").isEqualTo(400);
      assertThat(noKey.body()).contains(ProblemType.KEY_MISSING.uri());
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("pay_1:1");
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(app.getBean(FakeReactiveApplication.RefundsController.class).refunded())
          .isEqualTo(1);
    }
  }

  @Test
  void aTransactionalRouteStopsAReactiveApplicationNamingTheProperty() {
    assertThatThrownBy(() -> start("once.routes[0].transactional=true").close())
        .hasStackTraceContaining("once.routes[0].transactional");
  }

  @Test
  void theBodyTimeoutIsAProperty() throws Exception {
    try (ConfigurableApplicationContext app = start("once.filter.body-timeout=500ms");
        Socket socket = new Socket("127.0.0.1", port(app))) {
      socket.setSoTimeout(20_000);
      // A keyed head that declares a body, then silence: 408 after half a second, not ten.
      socket
          .getOutputStream()
          .write(
              ("POST /api/payments HTTP/1.1\r\nHost: localhost\r\nApi-Key: sk_merchant_1\r\n"
                      + "Idempotency-Key: k-slow\r\nContent-Type: application/json\r\n"
                      + "Content-Length: 20\r\n\r\n{")
                  .getBytes(StandardCharsets.US_ASCII));
      long start = System.nanoTime();
      String status = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);

      assertThat(status).isEqualTo("HTTP/1.1 408");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
    }
  }

  @Test
  void aBodyTimeoutThatIsNotPositiveStopsStartupNamingTheProperty() {
    assertThatThrownBy(() -> start("once.filter.body-timeout=0s").close())
        .hasStackTraceContaining("once.filter.body-timeout");
  }

  private static int port(ConfigurableApplicationContext app) {
    return app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
  }

  private static ConfigurableApplicationContext start(String... more) {
    List<String> properties =
        new ArrayList<>(
            List.of(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.main.banner-mode=off",
                "once.store.type=memory",
                "once.filter.order=-5",
                "once.routes[0].pattern=/api/**",
                "once.routes[0].key-required=true"));
    properties.addAll(List.of(more));
    return new SpringApplicationBuilder(FakeReactiveApplication.class)
        .web(WebApplicationType.REACTIVE)
        .properties(properties.toArray(String[]::new))
        .run();
  }

  private static HttpRequest.Builder post(
      ConfigurableApplicationContext app, String path, String key, String json) {
    int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .header("Api-Key", "sk_merchant_1")
            .POST(HttpRequest.BodyPublishers.ofString(json));
    return key == null ? b : b.header("Idempotency-Key", key);
  }

  private HttpResponse<String> send(ConfigurableApplicationContext app, HttpRequest.Builder request)
      throws Exception {
    return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}

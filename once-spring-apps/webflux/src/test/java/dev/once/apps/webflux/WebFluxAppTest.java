package dev.once.apps.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.apps.DocumentedDependencies;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/** The WebFlux application of docs/webflux.md starts, with no servlet API, and guards its route. */
class WebFluxAppTest {

  @Test
  void itsDependenciesAreThoseTheDocPageLists() throws Exception {
    DocumentedDependencies.assertPomMatches("webflux.md", "webflux");
  }

  @Test
  void theServletApiIsNotOnTheClassPath() {
    assertThatThrownBy(() -> Class.forName("jakarta.servlet.Filter"))
        .isInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void aRetryWithTheSameKeyIsReplayedAndThePaymentBookedOnce() throws Exception {
    try (ConfigurableApplicationContext app =
        SpringApplication.run(WebFluxApp.class, "--server.port=0")) {
      URI uri =
          URI.create(
              "http://127.0.0.1:"
                  + app.getEnvironment().getProperty("local.server.port")
                  + "/api/payments");
      HttpClient client = HttpClient.newHttpClient();
      HttpRequest.Builder payment =
          HttpRequest.newBuilder(uri)
              .header("Api-Key", "sk_test_acme")
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":1250}"));

      HttpResponse<String> first =
          client.send(
              payment.copy().header("Idempotency-Key", "pay-1").build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> retry =
          client.send(
              payment.copy().header("Idempotency-Key", "pay-1").build(),
              HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> keyless =
          client.send(payment.build(), HttpResponse.BodyHandlers.ofString());

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(first.body()).contains("\"run\":1");
      assertThat(retry.statusCode()).isEqualTo(201);
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(keyless.statusCode()).as("key-required: true").isEqualTo(400);
      assertThat(app.getBean(WebFluxApp.Payments.class).runs()).isEqualTo(1);
    }
  }
}

package dev.once.apps.mvc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.apps.DocumentedDependencies;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/** The Spring MVC application of docs/spring-boot.md starts and guards its @Idempotent handler. */
class MvcAppTest {

  @Test
  void itsDependenciesAreThoseTheDocPageLists() throws Exception {
    DocumentedDependencies.assertPomMatches("spring-boot.md", "mvc");
  }

  @Test
  void aRetryWithTheSameKeyIsReplayedAndThePaymentBookedOnce() throws Exception {
    try (ConfigurableApplicationContext app =
        SpringApplication.run(MvcApp.class, "--server.port=0")) {
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
      assertThat(keyless.statusCode()).as("keyRequired = true").isEqualTo(400);
      assertThat(app.getBean(MvcApp.Payments.class).runs()).isEqualTo(1);
    }
  }
}

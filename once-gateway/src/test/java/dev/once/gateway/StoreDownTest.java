package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.FakeUnavailableStore;
import dev.once.http.ProblemType;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * With the store down, fail-closed routes refuse to run anything and fail-open ones run unguarded.
 */
@Timeout(60)
class StoreDownTest {

  @Test
  void aFailClosedRouteAnswers503WithRetryAfterAndNeverReachesTheUpstream() throws Exception {
    try (TestGateway gw = TestGateway.start(new OpenStore(new FakeUnavailableStore(), () -> {}))) {
      HttpResponse<String> response = gw.client.postJson("/payments/closed", key(), "{}");

      assertProblem(response, ProblemType.STORE_UNAVAILABLE);
      assertThat(response.headers().firstValue("Retry-After")).isPresent();
      assertThat(gw.upstream.runs("/payments/closed")).isZero();
    }
  }

  @Test
  void aFailOpenRouteRunsTheRequestUnguarded() throws Exception {
    try (TestGateway gw = TestGateway.start(new OpenStore(new FakeUnavailableStore(), () -> {}))) {
      HttpResponse<String> response = gw.client.postJson("/open/payments", key(), "{}");

      assertThat(response.statusCode()).isEqualTo(201);
      assertThat(gw.upstream.runs("/open/payments")).isEqualTo(1);
    }
  }

  @Test
  void healthReportsTheStoreDown() throws Exception {
    try (TestGateway gw = TestGateway.start(new OpenStore(new FakeUnavailableStore(), () -> {}))) {
      HttpResponse<String> health = gw.management().get("/health");

      assertThat(health.statusCode()).isEqualTo(503);
      assertThat(health.body()).contains("\"store\":\"DOWN\"");
    }
  }
}

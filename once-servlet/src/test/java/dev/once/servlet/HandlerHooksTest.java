package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static dev.once.servlet.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** What a handler can learn from the filter, and tell it: the exchange, and an ambiguous outcome. */
class HandlerHooksTest extends GuardedAppTest {

  @Test
  void theHandlerFindsTheExchangeWithItsScopeAndFencingToken() throws Exception {
    HttpResponse<String> response = shop.postJson("/api/exchange", key(), "{}");

    assertThat(response.statusCode()).isEqualTo(200);
    // The scope starts with the tenant's API-key hash; the token is a positive number.
    assertThat(response.body()).startsWith("sha256:").matches(".* [1-9][0-9]*");
  }

  @Test
  void anAmbiguousOutcomeIsSentButKeepsTheKeyInFlightInsteadOfReleasingIt() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/async/ambiguous", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/async/ambiguous", key, "{}");

    assertThat(first.statusCode()).isEqualTo(504);
    assertProblem(retry, ProblemType.IN_FLIGHT);
    assertThat(shop.app.executions("/api/async/ambiguous")).isEqualTo(1);
  }
}

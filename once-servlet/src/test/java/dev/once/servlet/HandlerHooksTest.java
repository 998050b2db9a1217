package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * What a handler can learn from the filter, and tell it: the exchange, and an ambiguous outcome.
 */
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
    assertThat(shop.firstAnswerWhileTheKeyStaysInFlight("/api/async/ambiguous").statusCode())
        .isEqualTo(504);
  }

  @Test
  void anAmbiguousOutcomeKeepsTheKeyInFlightEvenWhenTheHandlerThrows() throws Exception {
    assertThat(shop.firstAnswerWhileTheKeyStaysInFlight("/api/ambiguous-throw").statusCode())
        .isEqualTo(500);
  }
}

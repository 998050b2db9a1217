package dev.once.examples.payments;

import static dev.once.examples.payments.PaymentsClient.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Without a profile the example runs on H2 with an in-memory store: not transactional, but still
 * once per key.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class EmbeddedModeTest {

  @LocalServerPort int port;

  @Autowired JdbcTemplate jdbc;

  @Test
  void theDemoWalletsPayOnceAndReplay() throws Exception {
    PaymentsClient client = new PaymentsClient(port, jdbc);
    String key = key();

    HttpResponse<String> first =
        client.pay("sk_test_acme", key, 1_250, "acme_main", "acme_payouts");
    HttpResponse<String> retry =
        client.pay("sk_test_acme", key, 1_250, "acme_main", "acme_payouts");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(client.balance("acme_payouts")).isEqualTo(1_250);
  }
}

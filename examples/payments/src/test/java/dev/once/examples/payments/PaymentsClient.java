package dev.once.examples.payments;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What a merchant's integration does: JSON over a socket, plus a look at the ledger for assertions.
 */
final class PaymentsClient {

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final String base;
  private final JdbcTemplate jdbc;

  PaymentsClient(int port, JdbcTemplate jdbc) {
    this.base = "http://127.0.0.1:" + port;
    this.jdbc = jdbc;
  }

  static String key() {
    return UUID.randomUUID().toString();
  }

  HttpResponse<String> pay(
      String apiKey, String idempotencyKey, long amount, String source, String destination)
      throws Exception {
    String body =
        "{\"amount\":"
            + amount
            + ",\"currency\":\"EUR\",\"source\":\""
            + source
            + "\",\"destination\":\""
            + destination
            + "\"}";
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + "/api/payments"))
            .timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (apiKey != null) {
      b.header("Api-Key", apiKey);
    }
    if (idempotencyKey != null) {
      b.header("Idempotency-Key", idempotencyKey);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> show(String apiKey, String paymentId) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(base + "/api/payments/" + paymentId))
            .header("Api-Key", apiKey)
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A new wallet of the merchant with this balance; returns its id. */
  String wallet(String merchant, long balance) {
    String id = merchant + "_" + UUID.randomUUID().toString().substring(0, 13);
    jdbc.update(
        "INSERT INTO pay_accounts (id, merchant_id, currency, balance) VALUES (?, ?, 'EUR', ?)",
        id,
        merchant,
        balance);
    return id;
  }

  long balance(String wallet) {
    return jdbc.queryForObject("SELECT balance FROM pay_accounts WHERE id = ?", Long.class, wallet);
  }

  /**
   * The sum of the wallet's ledger entries: double entry means it always equals the balance moved.
   */
  long entries(String wallet) {
    return jdbc.queryForObject(
        "SELECT COALESCE(SUM(amount), 0) FROM pay_ledger_entries WHERE account_id = ?",
        Long.class,
        wallet);
  }

  int paymentsFrom(String wallet) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM pay_payments WHERE source = ?", Integer.class, wallet);
  }

  void topUp(String wallet, long amount) {
    jdbc.update("UPDATE pay_accounts SET balance = balance + ? WHERE id = ?", amount, wallet);
  }
}

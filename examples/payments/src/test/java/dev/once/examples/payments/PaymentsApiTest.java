package dev.once.examples.payments;

import static dev.once.examples.payments.PaymentsClient.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The payments API on PostgreSQL in transactional mode, over sockets, audited against its ledger.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"server.tomcat.threads.max=256", "server.tomcat.accept-count=512"})
@ActiveProfiles("postgres")
@Timeout(120)
class PaymentsApiTest {

  private static final String ACME = "sk_test_acme";
  private static final String GLOBEX = "sk_test_globex";

  @LocalServerPort int port;

  @Autowired JdbcTemplate jdbc;

  private PaymentsClient client;

  /** This run's own idempotency table: builds in other worktrees share the server. */
  private static final String RECORDS =
      "once_records_payments_" + Long.toString(System.nanoTime(), 36);

  @DynamicPropertySource
  static void store(DynamicPropertyRegistry registry) {
    registry.add("once.store.table-name", () -> RECORDS);
  }

  @BeforeAll
  static void server() {
    Postgres.require();
  }

  @AfterAll
  static void dropRecords() {
    Postgres.drop(RECORDS);
  }

  @BeforeEach
  void connect() {
    client = new PaymentsClient(port, jdbc);
  }

  @Test
  void aPaymentIsBookedOnceAndItsRetryGetsTheSameResponse() throws Exception {
    String src = client.wallet("acme", 10_000);
    String dst = client.wallet("acme", 0);
    String key = key();

    HttpResponse<String> first = client.pay(ACME, key, 2_500, src, dst);
    HttpResponse<String> retry = client.pay(ACME, key, 2_500, src, dst);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body())
        .contains("\"amount\":2500", "\"status\":\"succeeded\"", "\"payment_id\":\"pay_");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(client.balance(src)).isEqualTo(7_500);
    assertThat(client.balance(dst)).isEqualTo(2_500);
    assertThat(client.entries(src)).isEqualTo(-2_500);
    assertThat(client.entries(dst)).isEqualTo(2_500);
    String id = first.body().replaceAll(".*\"payment_id\":\"([^\"]+)\".*", "$1");
    assertThat(client.show(ACME, id).body()).isEqualTo(first.body());
  }

  @Test
  void aKeyReusedForAnotherAmountIs422AndMovesNothing() throws Exception {
    String src = client.wallet("acme", 10_000);
    String dst = client.wallet("acme", 0);
    String key = key();
    client.pay(ACME, key, 1_000, src, dst);

    HttpResponse<String> reuse = client.pay(ACME, key, 9_000, src, dst);

    assertThat(reuse.statusCode()).isEqualTo(422);
    assertThat(reuse.body()).contains("idempotency-key-reused");
    assertThat(client.balance(src)).isEqualTo(9_000);
  }

  @Test
  void twoMerchantsUsingTheSameKeyGetTwoPaymentsAndNeitherSeesTheOthers() throws Exception {
    String acmeSrc = client.wallet("acme", 10_000);
    String acmeDst = client.wallet("acme", 0);
    String globexSrc = client.wallet("globex", 10_000);
    String globexDst = client.wallet("globex", 0);
    String key = key();

    HttpResponse<String> acme = client.pay(ACME, key, 100, acmeSrc, acmeDst);
    HttpResponse<String> globex = client.pay(GLOBEX, key, 100, globexSrc, globexDst);
    HttpResponse<String> acmeAgain = client.pay(ACME, key, 100, acmeSrc, acmeDst);
    HttpResponse<String> globexAgain = client.pay(GLOBEX, key, 100, globexSrc, globexDst);

    assertThat(acme.statusCode()).isEqualTo(201);
    assertThat(globex.statusCode()).isEqualTo(201);
    assertThat(acme.body()).isNotEqualTo(globex.body());
    assertThat(acmeAgain.body()).isEqualTo(acme.body());
    assertThat(globexAgain.body()).isEqualTo(globex.body());
    assertThat(client.balance(acmeSrc)).isEqualTo(9_900);
    assertThat(client.balance(globexSrc)).isEqualTo(9_900);
    String acmePayment = acme.body().replaceAll(".*\"payment_id\":\"([^\"]+)\".*", "$1");
    assertThat(client.show(GLOBEX, acmePayment).statusCode()).isEqualTo(404);
  }

  @Test
  void aMerchantCannotPayFromAnotherMerchantsWallet() throws Exception {
    String globexSrc = client.wallet("globex", 10_000);
    String acmeDst = client.wallet("acme", 0);

    HttpResponse<String> r = client.pay(ACME, key(), 100, globexSrc, acmeDst);

    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(client.balance(globexSrc)).isEqualTo(10_000);
  }

  @Test
  void insufficientFundsIs402AndStaysTheAnswerForThatKeyEvenAfterATopUp() throws Exception {
    String src = client.wallet("acme", 100);
    String dst = client.wallet("acme", 0);
    String key = key();

    HttpResponse<String> declined = client.pay(ACME, key, 500, src, dst);
    client.topUp(src, 10_000);
    HttpResponse<String> retry = client.pay(ACME, key, 500, src, dst);

    assertThat(declined.statusCode()).isEqualTo(402);
    assertThat(declined.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
    assertThat(declined.body()).contains("insufficient-funds");
    assertThat(retry.statusCode()).isEqualTo(402);
    assertThat(retry.body()).isEqualTo(declined.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(client.balance(src)).isEqualTo(10_100);
    assertThat(client.paymentsFrom(src)).isZero();
  }

  @Test
  void withoutAKeyOrWithAnUnknownApiKeyNothingIsBooked() throws Exception {
    String src = client.wallet("acme", 1_000);
    String dst = client.wallet("acme", 0);

    HttpResponse<String> noKey = client.pay(ACME, null, 100, src, dst);
    HttpResponse<String> stranger = client.pay("sk_test_nobody", key(), 100, src, dst);

    assertThat(noKey.statusCode()).isEqualTo(400);
    assertThat(noKey.body()).contains("idempotency-key-missing");
    assertThat(stranger.statusCode()).isEqualTo(401);
    assertThat(client.balance(src)).isEqualTo(1_000);
  }

  @Test
  void aHerdOf200IdenticalRequestsBooksOnePaymentWithoutDeadlock() throws Exception {
    String src = client.wallet("acme", 1_000_000);
    String dst = client.wallet("acme", 0);
    String key = key();

    List<HttpResponse<String>> responses =
        concurrently(200, i -> client.pay(ACME, key, 700, src, dst));

    assertThat(client.paymentsFrom(src)).isEqualTo(1);
    assertThat(client.balance(src)).isEqualTo(1_000_000 - 700);
    assertThat(client.entries(dst)).isEqualTo(700);
    String body =
        responses.stream().filter(r -> r.statusCode() == 201).findFirst().orElseThrow().body();
    for (HttpResponse<String> r : responses) {
      assertThat(r.statusCode()).as(r.body()).isIn(201, 409);
      if (r.statusCode() == 201) {
        assertThat(r.body()).isEqualTo(body);
      }
    }
  }

  @Test
  void paymentsCrossingBetweenTwoWalletsDoNotDeadlockAndConserveMoney() throws Exception {
    String a = client.wallet("acme", 10_000);
    String b = client.wallet("acme", 10_000);

    List<HttpResponse<String>> responses =
        concurrently(
            100,
            i ->
                i % 2 == 0 ? client.pay(ACME, key(), 10, a, b) : client.pay(ACME, key(), 10, b, a));

    assertThat(responses).extracting(HttpResponse::statusCode).containsOnly(201);
    assertThat(client.balance(a) + client.balance(b)).isEqualTo(20_000);
    assertThat(client.balance(a)).isEqualTo(10_000 + client.entries(a));
  }

  private interface Call {
    HttpResponse<String> send(int i) throws Exception;
  }

  /** Releases {@code n} threads at once, each sending one request. */
  private static List<HttpResponse<String>> concurrently(int n, Call call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<HttpResponse<String>>> all = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        all.add(
            pool.submit(
                () -> {
                  go.await();
                  return call.send(index);
                }));
      }
      go.countDown();
      List<HttpResponse<String>> responses = new ArrayList<>();
      for (Future<HttpResponse<String>> f : all) {
        responses.add(f.get(90, TimeUnit.SECONDS));
      }
      return responses;
    } finally {
      pool.shutdownNow();
    }
  }
}

package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.spring.ledger.FakeLedgerApplication;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A transactional route on PostgreSQL: the claim, the handler's insert and the record commit or
 * roll back together.
 */
@SpringBootTest(
    classes = FakeLedgerApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "spring.datasource.url=" + PostgresService.URL,
      "spring.datasource.username=postgres",
      "spring.datasource.hikari.maximum-pool-size=8"
    })
@Import(TransactionalRouteTest.CountingStoreCalls.class)
@ExtendWith(OutputCaptureExtension.class)
class TransactionalRouteTest {

  /**
   * Every claim and release the engine asks of the store, by key, in order; a claim or finish that
   * came in a gathered batch is written "batched claim KEY" or "batched finish KEY".
   */
  static final List<String> CALLS = new CopyOnWriteArrayList<>();

  /**
   * Records the store calls. It passes the store's batching on, as a decorator that wants to see
   * gathered calls must: the engine asks the outermost store whether to gather.
   */
  @TestConfiguration(proxyBeanMethods = false)
  static class CountingStoreCalls {
    @Bean
    OnceAutoConfiguration.StoreDecorator recordingStoreCalls() {
      return store ->
          new ForwardingStore() {
            @Override
            protected IdempotencyStore delegate() {
              return store;
            }

            @Override
            public boolean batches() {
              return store.batches();
            }

            @Override
            public boolean batchesOnThisThread() {
              return store.batchesOnThisThread();
            }

            @Override
            public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
              requests.forEach(r -> CALLS.add("batched claim " + r.id().key().value()));
              return store.claimAll(requests);
            }

            @Override
            public List<Boolean> finishAll(List<Finish> finishes) {
              finishes.forEach(f -> CALLS.add("batched finish " + f.id().key().value()));
              return store.finishAll(finishes);
            }

            @Override
            public ClaimResult claim(ClaimRequest request) {
              CALLS.add("claim " + request.id().key().value());
              if (request.id().key().value().startsWith(SLOW)) {
                // A slow single claim keeps the engine's few calls under way busy, so that the
                // requests behind them queue and go as a batch: long enough for all 32 to arrive
                // on a loaded machine.
                pause(Duration.ofMillis(200));
              }
              return super.claim(request);
            }

            @Override
            public boolean release(RecordId id, long token) {
              CALLS.add("release " + id.key().value());
              return super.release(id, token);
            }
          };
    }
  }

  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort int port;

  @Autowired JdbcTemplate jdbc;

  private static final String RECORDS = PostgresService.freshTable("once_records_starter_tx");

  @DynamicPropertySource
  static void store(DynamicPropertyRegistry registry) {
    registry.add("once.store.table-name", () -> RECORDS);
  }

  @AfterAll
  static void dropRecords() throws Exception {
    PostgresService.drop(RECORDS);
  }

  @BeforeAll
  static void table() throws Exception {
    PostgresService.require();
    try (Connection c = DriverManager.getConnection(PostgresService.URL, "postgres", "");
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS "
              + FakeLedgerApplication.TABLE
              + " (id bigserial PRIMARY KEY, note text)");
    }
  }

  private HttpResponse<String> post(String query, String key, String note) throws Exception {
    return postTo("/api/entries" + query, key, note);
  }

  private HttpResponse<String> postTo(String path, String key, String note) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("Api-Key", "sk_ledger")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString("{\"note\":\"" + note + "\"}"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private int rows(String note) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM " + FakeLedgerApplication.TABLE + " WHERE note = ?",
        Integer.class,
        note);
  }

  private int records(String key) {
    return jdbc.queryForObject(
        "SELECT count(*) FROM " + RECORDS + " WHERE idem_key = ?", Integer.class, key);
  }

  private static String unique() {
    return UUID.randomUUID().toString();
  }

  @Test
  void aSuccessCommitsTheWriteAndTheRecordAndItsRetryWritesNothing() throws Exception {
    String key = unique();
    String note = unique();

    HttpResponse<String> first = post("", key, note);
    HttpResponse<String> retry = post("", key, note);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(rows(note)).isEqualTo(1);
    assertThat(records(key)).isEqualTo(1);
  }

  @Test
  void aTransientAnswerRollsBackTheWriteAndTheClaim() throws Exception {
    String key = unique();
    String note = unique();

    HttpResponse<String> first = post("?status=503", key, note);

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(rows(note)).isZero();
    assertThat(records(key)).isZero();
  }

  @Test
  void aHandlerExceptionRollsBackTheWriteAndTheClaim() throws Exception {
    String key = unique();
    String note = unique();

    HttpResponse<String> first = post("?fail=true", key, note);

    assertThat(first.statusCode()).isEqualTo(500);
    assertThat(rows(note)).isZero();
    assertThat(records(key)).isZero();
  }

  @Test
  void anSqlErrorInTheHandlerRollsBackTheClaimWithoutTouchingTheAbortedTransaction(
      CapturedOutput output) throws Exception {
    String key = unique();
    String note = unique();

    HttpResponse<String> first = post("?violate=true", key, note);

    // The handler's duplicate key aborted the transaction; the rollback alone releases the key.
    assertThat(first.statusCode()).isEqualTo(500);
    assertThat(callsFor(key)).containsExactly("claim " + key);
    assertThat(records(key)).isZero();
    assertThat(rows(note)).isZero();
    assertThat(output.getAll())
        .doesNotContain("stays in progress")
        .doesNotContain("current transaction is aborted");

    HttpResponse<String> retry = post("", key, note);

    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(rows(note)).isEqualTo(1);
    assertThat(records(key)).isEqualTo(1);
  }

  /** Keys whose single claims the recording store slows down. */
  static final String SLOW = "slow-";

  private static void pause(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sends {@code n} requests at once, each with its own new key, and returns the keys. */
  private List<String> concurrentlyOn(String path, int n) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    CountDownLatch go = new CountDownLatch(1);
    List<String> keys = new ArrayList<>();
    List<Future<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String key = SLOW + unique();
      keys.add(key);
      all.add(
          pool.submit(
              () -> {
                go.await();
                return postTo(path, key, key);
              }));
    }
    go.countDown();
    try {
      for (Future<HttpResponse<String>> f : all) {
        assertThat(f.get().statusCode()).isEqualTo(201);
      }
    } finally {
      pool.shutdown();
    }
    return keys;
  }

  @Test
  void concurrentRequestsOnARouteThatIsNotTransactionalShareGatheredTransactions()
      throws Exception {
    List<String> keys = concurrentlyOn("/api/notes", 32);

    List<String> gathered =
        keys.stream().filter(k -> CALLS.contains("batched claim " + k)).toList();
    assertThat(gathered).isNotEmpty();
    for (String key : keys) {
      assertThat(records(key)).isEqualTo(1);
    }
  }

  @Test
  void concurrentTransactionalRequestsAreNeverGatheredAndEachCommitsWithItsWrite()
      throws Exception {
    List<String> keys = concurrentlyOn("/api/entries", 32);

    for (String key : keys) {
      assertThat(callsFor(key)).containsExactly("claim " + key);
      assertThat(rows(key)).isEqualTo(1);
      assertThat(records(key)).isEqualTo(1);
    }
  }

  private static List<String> callsFor(String key) {
    return CALLS.stream().filter(c -> c.endsWith(" " + key)).toList();
  }

  @Test
  void aFinalFailureCommitsWithItsRecordAndIsReplayed() throws Exception {
    String key = unique();
    String note = unique();

    post("?status=402", key, note);
    HttpResponse<String> retry = post("?status=402", key, note);

    assertThat(retry.statusCode()).isEqualTo(402);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(rows(note)).isEqualTo(1);
  }

  @Test
  void fiftyConcurrentIdenticalRequestsWriteOnce() throws Exception {
    String key = unique();
    String note = unique();
    ExecutorService pool = Executors.newFixedThreadPool(50);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<HttpResponse<String>>> all = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      all.add(
          pool.submit(
              () -> {
                go.await();
                return post("", key, note);
              }));
    }
    go.countDown();

    List<Integer> statuses = new ArrayList<>();
    for (Future<HttpResponse<String>> f : all) {
      statuses.add(f.get().statusCode());
    }
    pool.shutdown();

    assertThat(rows(note)).isEqualTo(1);
    assertThat(statuses).containsOnly(201);
  }
}

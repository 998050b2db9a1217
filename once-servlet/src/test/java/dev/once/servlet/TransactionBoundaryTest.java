package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * On a transactional route the claim, the handler and the record share one transaction, committed
 * before the response leaves.
 */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransactionBoundaryTest {

  private final RecordingTransactions transactions = new RecordingTransactions();
  private GuardedApp shop;

  @BeforeAll
  void start() throws Exception {
    shop = GuardedApp.with(transactions);
  }

  @AfterAll
  void stop() throws Exception {
    shop.close();
  }

  @BeforeEach
  void forget() {
    transactions.endings.clear();
    transactions.holdCommit = new CountDownLatch(0);
    transactions.workDone = new CountDownLatch(1);
  }

  @Test
  void theResponseLeavesOnlyAfterTheTransactionEnds() throws Exception {
    transactions.holdCommit = new CountDownLatch(1);
    CompletableFuture<HttpResponse<String>> pending =
        shop.client.sendAsync(
            shop.post("/tx/api/payments", key(), "{}").build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(transactions.workDone.await(10, TimeUnit.SECONDS)).isTrue();
    boolean sentBeforeCommit = transactions.committedBeforeEnd || pending.isDone();
    transactions.holdCommit.countDown();

    assertThat(sentBeforeCommit)
        .as("the response was committed before the transaction ended")
        .isFalse();
    assertThat(pending.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    assertThat(transactions.endings).containsExactly("COMMIT");
  }

  @Test
  void aRecordedFailureCommitsAndATransientOneRollsBack() throws Exception {
    shop.postJson("/tx/api/status/402", key(), "{}");
    shop.postJson("/tx/api/status/503", key(), "{}");

    assertThat(transactions.endings).containsExactly("COMMIT", "ROLL_BACK");
  }

  @Test
  void aReplayReadsOnlyAndRollsBack() throws Exception {
    String key = key();
    shop.postJson("/tx/api/payments", key, "{}");

    HttpResponse<String> replay = shop.postJson("/tx/api/payments", key, "{}");

    assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(transactions.endings).containsExactly("COMMIT", "ROLL_BACK");
  }

  @Test
  void aHandlerExceptionRollsBackThroughTheBoundary() throws Exception {
    HttpResponse<String> r = shop.postJson("/tx/api/throw", key(), "{}");

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(transactions.endings).containsExactly("ROLL_BACK on IllegalStateException");
  }

  @Test
  void anAsynchronousHandlerOnATransactionalRouteIsRefusedAndRolledBack() throws Exception {
    String key = key();

    HttpResponse<String> r = shop.postJson("/tx/api/async/complete", key, "{}");

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(transactions.endings).containsExactly("ROLL_BACK on IllegalStateException");
  }

  @Test
  void routesTheBoundaryDoesNotCoverRunWithoutIt() throws Exception {
    shop.postJson("/api/payments/plain", key(), "{}");

    assertThat(transactions.endings).isEmpty();
  }
}

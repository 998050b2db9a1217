package dev.once.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.FinalFailure;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement.Ack;
import dev.once.messaging.Acknowledgement.AckReason;
import dev.once.messaging.Acknowledgement.DeadLetter;
import dev.once.messaging.Acknowledgement.Redeliver;
import dev.once.messaging.Acknowledgement.RedeliverReason;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.jdbc.PostgresStore;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The transactional consumer on the machine's PostgreSQL: the business row, the outbox row and the
 * record commit together or not at all, and a duplicate never writes twice.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransactionalMessageIdempotencyTest {

  private static final Scope SCOPE = Scope.of("billing", "orders");
  private static final String RUN = Long.toHexString(new SecureRandom().nextLong() & 0xFFFFFFFFL);

  private final String records = "once_msg_" + RUN;
  private final String invoices = "once_msg_invoices_" + RUN;
  private final String outbox = "once_msg_outbox_" + RUN;
  private HikariDataSource pool;
  private PostgresStore store;
  private TransactionalMessageIdempotency<TestMessage> messages;

  @BeforeAll
  void createTables() {
    pool = Postgres.pool(8);
    Postgres.execute(
        pool,
        "CREATE TABLE " + invoices + " (idem_key varchar(255) PRIMARY KEY, amount int NOT NULL)",
        "CREATE TABLE " + outbox + " (id bigserial PRIMARY KEY, idem_key varchar(255) NOT NULL)");
    store = PostgresStore.builder(pool).tableName(records).autoCreateSchema(true).build();
  }

  @BeforeEach
  void build() {
    messages =
        TransactionalMessageIdempotency.builder(pool, store.transactional()::on, TestMessage.READER)
            .scope(SCOPE)
            .build();
  }

  @AfterEach
  void close() {
    messages.close();
  }

  @AfterAll
  void dropTables() {
    if (pool != null) {
      if (store != null) {
        store.close();
      }
      Postgres.execute(
          pool,
          "DROP TABLE IF EXISTS " + invoices,
          "DROP TABLE IF EXISTS " + outbox,
          "DROP TABLE IF EXISTS " + records,
          "DROP SEQUENCE IF EXISTS " + records + "_seq");
      pool.close();
    }
  }

  private static String newKey() {
    return "order-" + UUID.randomUUID();
  }

  /** The business effect: an invoice and an outbox row, on the consumer's connection. */
  private void invoice(TestMessage m, Connection c) throws SQLException {
    String key = m.headers().get(KeyExtractor.DEFAULT_HEADER);
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + invoices + " VALUES (?, ?)")) {
      ps.setString(1, key);
      ps.setInt(2, 100);
      ps.executeUpdate();
    }
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + outbox + " (idem_key) VALUES (?)")) {
      ps.setString(1, key);
      ps.executeUpdate();
    }
  }

  private long rows(String table, String key) {
    return Postgres.count(
        pool, "SELECT count(*) FROM " + table + " WHERE idem_key = '" + key + "'");
  }

  private RecordState stateOf(String key) {
    return store.get(RecordId.of(SCOPE, IdempotencyKey.of(key))).map(r -> r.state()).orElse(null);
  }

  @Test
  void businessRowOutboxRowAndRecordCommitTogether() {
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");

    Acknowledgement a = messages.process(m, (msg, c, ctx) -> invoice(msg, c));

    assertThat(a).isEqualTo(new Ack(AckReason.PROCESSED));
    assertThat(rows(invoices, key)).isEqualTo(1);
    assertThat(rows(outbox, key)).isEqualTo(1);
    assertThat(stateOf(key)).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void redeliveryIsAcknowledgedWithoutWritingAgain() {
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");
    messages.process(m, (msg, c, ctx) -> invoice(msg, c));

    Acknowledgement again = messages.process(m, (msg, c, ctx) -> invoice(msg, c));

    assertThat(again).isEqualTo(new Ack(AckReason.DUPLICATE));
    assertThat(rows(invoices, key)).isEqualTo(1);
    assertThat(rows(outbox, key)).isEqualTo(1);
  }

  @Test
  void finalFailureRollsBackTheHandlersWritesAndRecordsTheFailure() {
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");

    Acknowledgement a =
        messages.process(
            m,
            (msg, c, ctx) -> {
              invoice(msg, c);
              throw new FinalFailure("credit-limit", "over the credit limit");
            });

    assertThat(a).isInstanceOf(DeadLetter.class);
    assertThat(((DeadLetter) a).failure().code()).isEqualTo("credit-limit");
    assertThat(rows(invoices, key)).isZero();
    assertThat(rows(outbox, key)).isZero();
    assertThat(stateOf(key)).isEqualTo(RecordState.FAILED_FINAL);
    assertThat(messages.process(m, (msg, c, ctx) -> invoice(msg, c)))
        .isEqualTo(new Ack(AckReason.DUPLICATE));
    assertThat(rows(invoices, key)).isZero();
  }

  @Test
  void finalFailureAfterAFailedStatementStillRecordsTheFailure() {
    String key = newKey();

    Acknowledgement a =
        messages.process(
            TestMessage.keyed(key, "{}"),
            (msg, c, ctx) -> {
              try (Statement s = c.createStatement()) {
                s.execute("SELECT * FROM no_such_table_" + RUN);
              } catch (SQLException e) {
                throw new FinalFailure("bad-schema", "missing table");
              }
            });

    assertThat(a).isInstanceOf(DeadLetter.class);
    assertThat(stateOf(key)).isEqualTo(RecordState.FAILED_FINAL);
  }

  @Test
  void transientFailureCommitsNothingAndTheRedeliveryRunsOnce() {
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");
    AtomicInteger attempts = new AtomicInteger();
    TransactionalHandler<TestMessage> flaky =
        (msg, c, ctx) -> {
          invoice(msg, c);
          if (attempts.incrementAndGet() == 1) {
            throw new java.io.IOException("payment provider timed out");
          }
        };

    Acknowledgement first = messages.process(m, flaky);

    assertThat(first).isInstanceOf(Redeliver.class);
    assertThat(((Redeliver) first).reason()).isEqualTo(RedeliverReason.TRANSIENT_FAILURE);
    assertThat(rows(invoices, key)).isZero();
    assertThat(stateOf(key)).isNull();
    assertThat(messages.process(m, flaky)).isEqualTo(new Ack(AckReason.PROCESSED));
    assertThat(rows(invoices, key)).isEqualTo(1);
  }

  @Test
  void handlerThatSwallowedAFailedStatementCommitsNothing() {
    String key = newKey();

    Acknowledgement a =
        messages.process(
            TestMessage.keyed(key, "{}"),
            (msg, c, ctx) -> {
              invoice(msg, c);
              try (Statement s = c.createStatement()) {
                s.execute("SELECT * FROM no_such_table_" + RUN);
              } catch (SQLException ignored) {
                // The transaction is now aborted; the record cannot be written in it.
              }
            });

    assertThat(a).isInstanceOf(Redeliver.class);
    assertThat(((Redeliver) a).reason()).isEqualTo(RedeliverReason.STORE_UNAVAILABLE);
    assertThat(rows(invoices, key)).isZero();
    assertThat(stateOf(key)).isNull();
  }

  @Test
  void sessionKilledBeforeCommitLeavesNeitherRowNorRecord() {
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");

    Acknowledgement a =
        messages.process(
            m,
            (msg, c, ctx) -> {
              invoice(msg, c);
              // The consumer's database session dies mid-transaction, as it does when the consumer
              // is killed.
              long pid;
              try (Statement s = c.createStatement();
                  ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                pid = rs.getLong(1);
              }
              Postgres.execute(pool, "SELECT pg_terminate_backend(" + pid + ")");
            });

    assertThat(a).isInstanceOf(Redeliver.class);
    assertThat(rows(invoices, key)).isZero();
    assertThat(rows(outbox, key)).isZero();
    assertThat(stateOf(key)).isNull();
    assertThat(messages.process(m, (msg, c, ctx) -> invoice(msg, c)))
        .isEqualTo(new Ack(AckReason.PROCESSED));
    assertThat(rows(invoices, key)).isEqualTo(1);
  }

  @Test
  void fiftyDeliveriesAcrossFourConsumersWriteOneRow() throws Exception {
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");
    ExecutorService consumers = Executors.newFixedThreadPool(4);
    CountDownLatch start = new CountDownLatch(1);
    AtomicInteger processed = new AtomicInteger();
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        done.add(
            consumers.submit(
                () -> {
                  start.await();
                  for (int attempt = 0; attempt < 1_000; attempt++) {
                    Acknowledgement a = messages.process(m, (msg, c, ctx) -> invoice(msg, c));
                    if (a.equals(new Ack(AckReason.PROCESSED))) {
                      processed.incrementAndGet();
                    }
                    if (a instanceof Ack) {
                      return null;
                    }
                    Thread.sleep(5);
                  }
                  throw new AssertionError("never acknowledged");
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(90, TimeUnit.SECONDS);
      }
    } finally {
      consumers.shutdownNow();
    }

    assertThat(processed).hasValue(1);
    assertThat(rows(invoices, key)).isEqualTo(1);
    assertThat(rows(outbox, key)).isEqualTo(1);
  }

  @Test
  void policyThatHeartbeatsOrFailsOpenIsRefused() {
    var builder =
        TransactionalMessageIdempotency.builder(pool, store.transactional()::on, TestMessage.READER)
            .scope(SCOPE);

    assertThatThrownBy(() -> builder.policy(ExecutionPolicy.DEFAULTS).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("heartbeat");
    assertThatThrownBy(
            () ->
                builder
                    .policy(
                        ExecutionPolicy.builder()
                            .heartbeat(false)
                            .failureMode(FailureMode.FAIL_OPEN)
                            .build())
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("FAIL_CLOSED");
  }
}

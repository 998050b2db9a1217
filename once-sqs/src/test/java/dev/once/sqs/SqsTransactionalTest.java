package dev.once.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.ExecutionPolicy;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.ConsumerStats;
import dev.once.messaging.TransactionalHandler;
import dev.once.messaging.TransactionalMessageIdempotency;
import dev.once.store.jdbc.PostgresStore;
import dev.once.tck.RequiredServices;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * The transactional consumer on SQS with PostgreSQL: the business row and the record commit
 * together or not at all.
 */
@Timeout(120)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqsTransactionalTest {

  private static final String RUN = Long.toHexString(new SecureRandom().nextLong() & 0xFFFFFFFFL);
  private final String records = "once_sqs_" + RUN;
  private final String effects = "once_sqs_effects_" + RUN;
  private PGSimpleDataSource db;
  private PostgresStore store;
  private SqsClient sqs;

  @BeforeAll
  void createTables() throws SQLException {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
    db = new PGSimpleDataSource();
    db.setUrl("jdbc:postgresql://127.0.0.1:5432/test");
    db.setUser("postgres");
    sql(
        "CREATE TABLE "
            + effects
            + " (idem_key varchar(255) NOT NULL)"); // no unique key: doubles must show
    store = PostgresStore.builder(db).tableName(records).autoCreateSchema(true).build();
    sqs = LocalSqs.client();
  }

  @AfterAll
  void dropTables() throws SQLException {
    if (store != null) {
      store.close();
      sql(
          "DROP TABLE IF EXISTS " + effects,
          "DROP TABLE IF EXISTS " + records,
          "DROP SEQUENCE IF EXISTS " + records + "_seq");
    }
  }

  private void sql(String... statements) throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      for (String each : statements) {
        s.execute(each);
      }
    }
  }

  private long rows(String key) throws SQLException {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT count(*) FROM " + effects + " WHERE idem_key = '" + key + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void insert(Connection c, Message m) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " VALUES (?)")) {
      ps.setString(1, SqsMessages.READER.header(m, "Idempotency-Key").orElseThrow());
      ps.executeUpdate();
    }
  }

  private TransactionalMessageIdempotency<Message> messages(String queue) {
    return TransactionalMessageIdempotency.builder(
            db, store.transactional()::on, SqsMessages.READER)
        .scope(Scope.of("test", queue))
        .policy(ExecutionPolicy.builder().lease(Duration.ofSeconds(2)).heartbeat(false).build())
        .inFlightRedeliveryDelay(Duration.ofSeconds(1))
        .build();
  }

  private void send(String queue, String key) {
    sqs.sendMessage(
        r ->
            r.queueUrl(queue)
                .messageBody("{}")
                .messageAttributes(
                    Map.of(
                        "Idempotency-Key",
                        MessageAttributeValue.builder()
                            .dataType("String")
                            .stringValue(key)
                            .build())));
  }

  @Test
  void twentyCopiesAcrossTwoConsumersCommitOneRow() throws Exception {
    String queue = LocalSqs.newQueue("once-tx");
    String key = "order-" + UUID.randomUUID();
    try (TransactionalMessageIdempotency<Message> orders = messages(queue)) {
      TransactionalHandler<Message> handler = (m, c, ctx) -> insert(c, m);
      try (SqsConsumer a =
              SqsConsumer.builder(sqs, queue, orders.processor(handler))
                  .visibilityTimeout(Duration.ofSeconds(2))
                  .start();
          SqsConsumer b =
              SqsConsumer.builder(sqs, queue, orders.processor(handler))
                  .visibilityTimeout(Duration.ofSeconds(2))
                  .start()) {
        for (int i = 0; i < 20; i++) {
          send(queue, key);
        }
        assertThat(LocalSqs.await(() -> acked(a.stats()) + acked(b.stats()) == 20)).isTrue();
        assertThat(a.stats().processed() + b.stats().processed()).isEqualTo(1);
      }
    }
    assertThat(rows(key)).isEqualTo(1);
  }

  private static long acked(ConsumerStats s) {
    return s.processed() + s.duplicates();
  }

  @Test
  void crashBeforeCommitLeavesNeitherRowNorRecordAndTheRedeliveryCommitsOnce() throws Exception {
    String queue = LocalSqs.newQueue("once-tx");
    String key = "order-" + UUID.randomUUID();
    send(queue, key);
    try (TransactionalMessageIdempotency<Message> orders = messages(queue)) {
      List<Message> received =
          sqs.receiveMessage(
                  r ->
                      r.queueUrl(queue)
                          .visibilityTimeout(2)
                          .waitTimeSeconds(5)
                          .messageAttributeNames("All"))
              .messages();
      // The consumer's database session dies after the business write, before the commit.
      Acknowledgement crashed =
          orders.process(
              received.get(0),
              (m, c, ctx) -> {
                insert(c, m);
                long pid;
                try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                  rs.next();
                  pid = rs.getLong(1);
                }
                sql("SELECT pg_terminate_backend(" + pid + ")");
              });
      assertThat(crashed).isInstanceOf(Acknowledgement.Redeliver.class);
      assertThat(rows(key)).isZero();

      try (SqsConsumer survivor =
          SqsConsumer.builder(sqs, queue, orders.processor((m, c, ctx) -> insert(c, m)))
              .visibilityTimeout(Duration.ofSeconds(2))
              .start()) {
        assertThat(LocalSqs.await(() -> survivor.stats().processed() == 1)).isTrue();
        assertThat(survivor.stats().redelivered()).isEqualTo(1);
      }
    }
    assertThat(rows(key)).isEqualTo(1);
  }
}

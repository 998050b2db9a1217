package dev.once.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.messaging.TransactionalMessageIdempotency;
import dev.once.store.jdbc.PostgresStore;
import dev.once.tck.ChildJvm;
import dev.once.tck.RequiredServices;
import java.security.SecureRandom;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A consumer process SIGKILLed mid-message ({@link CrashingConsumer} in a child JVM), with the
 * store and the effects in PostgreSQL: whatever the moment of death, the redelivery to a surviving
 * consumer leaves exactly one effect.
 */
@Timeout(180)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CrashTest {

  static final String RUN = Long.toHexString(new SecureRandom().nextLong() & 0xFFFFFFFFL);
  static final String RECORDS = "once_rmq_" + RUN;
  static final String EFFECTS = "once_rmq_effects_" + RUN;

  private DataSource db;
  private PostgresStore store;

  static DataSource database() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl("jdbc:postgresql://127.0.0.1:5432/test");
    ds.setUser("postgres");
    return ds;
  }

  /** The business effect: one row per message key. */
  static void insertEffect(String table, java.sql.Connection c, Delivery d) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + table + " (idem_key) VALUES (?)")) {
      ps.setString(1, AmqpMessages.READER.header(d, "Idempotency-Key").orElseThrow());
      ps.executeUpdate();
    }
  }

  @BeforeAll
  void createTables() throws SQLException {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
    db = database();
    try (java.sql.Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      // No unique constraint: a second effect must be counted, not refused.
      s.execute("CREATE TABLE " + EFFECTS + " (idem_key varchar(255) NOT NULL)");
    }
    store = PostgresStore.builder(db).tableName(RECORDS).autoCreateSchema(true).build();
  }

  @AfterAll
  void dropTables() throws SQLException {
    if (store != null) {
      store.close();
      try (java.sql.Connection c = db.getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + EFFECTS);
        s.execute("DROP TABLE IF EXISTS " + RECORDS);
        s.execute("DROP SEQUENCE IF EXISTS " + RECORDS + "_seq");
      }
    }
  }

  private long effects(String key) throws SQLException {
    try (java.sql.Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT count(*) FROM " + EFFECTS + " WHERE idem_key = '" + key + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void killedAfterRecordingBeforeAcknowledgingIsReplayedNotRerun() throws Exception {
    try (Once once = Once.of(store)) {
      MessageIdempotency<Delivery> survivor =
          MessageIdempotency.builder(once, AmqpMessages.READER)
              .scope(Scope.of("crash-test"))
              .build();
      crashThenRedeliver(
          CrashingConsumer.Mode.AFTER_RECORD,
          survivor.processor(
              (d, ctx) -> {
                try (java.sql.Connection c = db.getConnection()) {
                  insertEffect(EFFECTS, c, d);
                }
              }));
    }
  }

  @Test
  void killedBeforeCommitLeavesNothingAndTheRedeliveryRunsOnce() throws Exception {
    try (TransactionalMessageIdempotency<Delivery> survivor =
        TransactionalMessageIdempotency.builder(db, store.transactional()::on, AmqpMessages.READER)
            .scope(Scope.of("crash-test"))
            .build()) {
      crashThenRedeliver(
          CrashingConsumer.Mode.BEFORE_COMMIT,
          survivor.processor((d, c, ctx) -> insertEffect(EFFECTS, c, d)));
    }
  }

  private void crashThenRedeliver(CrashingConsumer.Mode mode, MessageProcessor<Delivery> processor)
      throws Exception {
    String key = "order-" + UUID.randomUUID();
    try (Connection connection = Rabbit.connect()) {
      Channel channel = connection.createChannel();
      String queue = "once-crash-" + UUID.randomUUID();
      channel.queueDeclare(queue, false, false, false, null);
      try {
        Rabbit.publish(channel, queue, key, null, "{}");
        try (ChildJvm child =
            ChildJvm.start(CrashingConsumer.class, mode.name(), queue, RECORDS, EFFECTS)) {
          child.awaitLine(mode.name(), 60);
          child.kill();
        }
        assertThat(effects(key)).isEqualTo(mode == CrashingConsumer.Mode.AFTER_RECORD ? 1 : 0);

        RabbitConsumer consumer = RabbitConsumer.builder(connection, queue, processor).start();
        try {
          assertThat(
                  Rabbit.await(
                      () ->
                          consumer.stats().delivered() == 1
                              && consumer.stats().processed() + consumer.stats().duplicates() == 1))
              .isTrue();
          assertThat(consumer.stats().redelivered()).isEqualTo(1);
          assertThat(consumer.stats().duplicates())
              .isEqualTo(mode == CrashingConsumer.Mode.AFTER_RECORD ? 1 : 0);
        } finally {
          consumer.close();
        }
        assertThat(effects(key)).isEqualTo(1);
      } finally {
        channel.queueDelete(queue);
      }
    }
  }
}

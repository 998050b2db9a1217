package dev.once.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.MessageIdempotency;
import dev.once.outbox.DeliveryOutcome;
import dev.once.outbox.Outbox;
import dev.once.outbox.OutboxMessage;
import dev.once.outbox.OutboxRelay;
import dev.once.outbox.PendingMessage;
import dev.once.store.InMemoryStore;
import dev.once.tck.RequiredServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The outbox's Kafka delivery against a real KRaft broker in this JVM, and the chain to a Once
 * consumer.
 */
class KafkaDeliveryTest {

  static KafkaBroker broker;
  static Topics topics;
  static KafkaDelivery kafka;

  @BeforeAll
  static void startBroker() throws Exception {
    broker = KafkaBroker.start();
    topics = new Topics(broker);
    kafka = KafkaDelivery.create(Map.of("bootstrap.servers", broker.bootstrapServers()));
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (kafka != null) {
      kafka.close();
    }
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void outboxRowsBecomeRecordsWithKeyHeadersAndTheDerivedIdempotencyKey() throws Exception {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
    broker.createTopic("invoices", 3);
    String table = "once_outbox_kafka_" + Long.toHexString(System.nanoTime() & 0xFFFFFFFL);
    try (HikariDataSource pool = pool()) {
      Outbox outbox =
          Outbox.postgres(pool).tableName(table).name("billing").autoCreateSchema(true).build();
      try (Connection c = pool.getConnection()) {
        c.setAutoCommit(false);
        for (int i = 0; i < 20; i++) {
          outbox.enqueue(
              c,
              OutboxMessage.builder("inv-" + i, "invoices")
                  .key("customer-" + (i % 4))
                  .header("Content-Type", "application/json")
                  .payload("{\"invoice\":" + i + "}")
                  .build());
        }
        c.commit();
      }
      OutboxRelay relay = outbox.relay(kafka).deliveryTimeout(Duration.ofSeconds(25)).build();
      for (int i = 0; i < 10 && relay.runOnce() > 0; i++) {
        // until nothing is due
      }
      List<ConsumerRecord<byte[], byte[]>> records = topics.readAll("invoices", 20);
      assertThat(records).hasSize(20);
      for (ConsumerRecord<byte[], byte[]> r : records) {
        int i = Integer.parseInt(Topics.text(r.value()).replaceAll("\\D", ""));
        assertThat(Topics.text(r.key())).isEqualTo("customer-" + (i % 4));
        assertThat(Topics.text(r.headers().lastHeader("Idempotency-Key").value()))
            .isEqualTo(outbox.idempotencyKey("inv-" + i));
        assertThat(Topics.text(r.headers().lastHeader("Content-Type").value()))
            .isEqualTo("application/json");
      }
    } finally {
      try (HikariDataSource pool = pool();
          Connection c = pool.getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + table);
      }
    }
  }

  @Test
  void aRecordSentTwiceByTheRelayIsAppliedOnceByAnIdempotentConsumer() throws Exception {
    broker.createTopic("payouts", 2);
    PendingMessage pending =
        new PendingMessage(
            OutboxMessage.builder("payout-9", "payouts").key("acct-1").payload("pay 9").build(),
            "5b1f3c1e-0000-5000-8000-000000000009",
            1);
    // As a relay that died after the send and before recording it would: the same message twice.
    assertThat(kafka.deliver(pending).get(30, TimeUnit.SECONDS))
        .isEqualTo(DeliveryOutcome.DELIVERED);
    assertThat(
            kafka
                .deliver(new PendingMessage(pending.message(), pending.idempotencyKey(), 2))
                .get(30, TimeUnit.SECONDS))
        .isEqualTo(DeliveryOutcome.DELIVERED);
    AtomicInteger effects = new AtomicInteger();
    try (Once once = Once.of(InMemoryStore.create());
        KafkaIdempotentConsumer consumer =
            KafkaIdempotentConsumer.builder(
                    Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        broker.bootstrapServers(),
                        ConsumerConfig.GROUP_ID_CONFIG,
                        "payouts"),
                    List.of("payouts"),
                    MessageIdempotency.builder(once, KafkaRecords.READER)
                        .scope(Scope.of("ledger", "payouts"))
                        .build()
                        .processor((record, context) -> effects.incrementAndGet()))
                .start()) {
      topics.awaitCommitted("payouts", "payouts", 2);
      assertThat(topics.committed("payouts", "payouts")).isEqualTo(2);
    }
    assertThat(effects.get()).isEqualTo(1);
  }

  @Test
  void retriableProducerErrorsAreRetriedAndOthersAreDead() {
    assertThat(
            KafkaDelivery.classify(
                new org.apache.kafka.common.errors.TimeoutException("no metadata")))
        .isInstanceOf(DeliveryOutcome.Retry.class);
    assertThat(
            KafkaDelivery.classify(
                new org.apache.kafka.common.errors.RecordTooLargeException("big")))
        .isInstanceOf(DeliveryOutcome.Dead.class);
    assertThat(
            KafkaDelivery.classify(
                new org.apache.kafka.common.errors.TopicAuthorizationException("no")))
        .isInstanceOf(DeliveryOutcome.Dead.class);
  }

  @Test
  void theGuaranteesCannotBeConfiguredAway() {
    assertThatThrownBy(() -> KafkaDelivery.create(Map.of()))
        .hasMessageContaining("bootstrap.servers");
    assertThatThrownBy(
            () ->
                KafkaDelivery.create(
                    Map.of("bootstrap.servers", "x:1", "enable.idempotence", "false")))
        .hasMessageContaining("enable.idempotence");
    assertThatThrownBy(() -> KafkaDelivery.create(Map.of("bootstrap.servers", "x:1", "acks", "1")))
        .hasMessageContaining("acks");
  }

  private static HikariDataSource pool() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
    config.setUsername("postgres");
    config.setPassword("");
    config.setMaximumPoolSize(4);
    return new HikariDataSource(config);
  }
}

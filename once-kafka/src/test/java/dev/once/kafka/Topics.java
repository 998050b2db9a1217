package dev.once.kafka;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Test helpers over one broker: producing, reading a topic back, and a group's committed offsets.
 */
final class Topics {

  private final KafkaBroker broker;

  Topics(KafkaBroker broker) {
    this.broker = broker;
  }

  /**
   * Produces {@code value} under record key {@code recordKey} with an Idempotency-Key header
   * (unless null).
   */
  void send(String topic, String recordKey, String idempotencyKey, String value) throws Exception {
    try (KafkaProducer<byte[], byte[]> p = producer()) {
      p.send(record(topic, recordKey, idempotencyKey, value)).get(30, TimeUnit.SECONDS);
    }
  }

  static ProducerRecord<byte[], byte[]> record(
      String topic, String recordKey, String idempotencyKey, String value) {
    ProducerRecord<byte[], byte[]> r =
        new ProducerRecord<>(
            topic,
            recordKey.getBytes(StandardCharsets.UTF_8),
            value.getBytes(StandardCharsets.UTF_8));
    if (idempotencyKey != null) {
      r.headers().add("Idempotency-Key", idempotencyKey.getBytes(StandardCharsets.UTF_8));
    }
    return r;
  }

  KafkaProducer<byte[], byte[]> producer() {
    return new KafkaProducer<>(
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrapServers(),
            ProducerConfig.LINGER_MS_CONFIG,
            5),
        new ByteArraySerializer(),
        new ByteArraySerializer());
  }

  /** Reads {@code topic} from the start until {@code expected} records came or 60 s passed. */
  List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int expected) {
    List<ConsumerRecord<byte[], byte[]>> all = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "reader-" + System.nanoTime(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      c.subscribe(List.of(topic));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (all.size() < expected && System.nanoTime() < deadline) {
        c.poll(Duration.ofMillis(200)).forEach(all::add);
      }
      // Anything beyond the expected count would show up within a few more polls.
      for (int i = 0; i < 3; i++) {
        c.poll(Duration.ofMillis(200)).forEach(all::add);
      }
    }
    return all;
  }

  /** The sum of the group's committed offsets on {@code topic}. */
  long committed(String group, String topic) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      Map<org.apache.kafka.common.TopicPartition, OffsetAndMetadata> offsets =
          admin
              .listConsumerGroupOffsets(group)
              .partitionsToOffsetAndMetadata()
              .get(30, TimeUnit.SECONDS);
      return offsets.entrySet().stream()
          .filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
          .mapToLong(e -> e.getValue().offset())
          .sum();
    }
  }

  /**
   * Waits until the group has committed {@code total} offsets on {@code topic}, or 120 s passed.
   */
  void awaitCommitted(String group, String topic, long total) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (committed(group, topic) < total && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }

  static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}

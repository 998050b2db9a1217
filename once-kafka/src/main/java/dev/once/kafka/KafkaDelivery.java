package dev.once.kafka;

import dev.once.outbox.Delivery;
import dev.once.outbox.DeliveryOutcome;
import dev.once.outbox.Outbox;
import dev.once.outbox.OutboxMessage;
import dev.once.outbox.PendingMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Delivers outbox messages as Kafka records through an idempotent producer ({@code
 * enable.idempotence=true}, {@code acks=all}): the destination is the topic, the message key the
 * record key (UTF-8), the payload the value, and the message's headers plus {@code Idempotency-Key}
 * (the derived key) the record headers.
 *
 * <pre>{@code
 * KafkaDelivery kafka = KafkaDelivery.create(Map.of("bootstrap.servers", "kafka:9092"));
 * outbox.relay(kafka).build().start();
 * }</pre>
 *
 * <p>The idempotent producer removes the duplicates its own retries would make; a relay that dies
 * after a send and before recording it sends the record again from a new producer, so the topic may
 * hold a message twice, with one {@code Idempotency-Key}: a {@link KafkaIdempotentConsumer} (whose
 * key is that header by default) applies it once. A retriable producer error is a retry; any other
 * (an unknown topic, a record too large, authorization) makes the message dead.
 */
public final class KafkaDelivery implements Delivery {

  private final KafkaProducer<byte[], byte[]> producer;

  private KafkaDelivery(Map<String, ?> producerConfig) {
    Map<String, Object> config = new HashMap<>(producerConfig);
    // Forced: the guarantees above rest on them.
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.putIfAbsent(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000);
    config.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    config.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 5);
    this.producer =
        new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /**
   * A delivery with a producer of its own ({@code bootstrap.servers} required). Its {@code
   * delivery.timeout.ms} (default here 20 s) bounds every send: keep it below the relay's {@code
   * deliveryTimeout}.
   */
  public static KafkaDelivery create(Map<String, ?> producerConfig) {
    if (producerConfig == null
        || producerConfig.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG) == null) {
      throw new IllegalArgumentException("producerConfig must set bootstrap.servers");
    }
    Object idempotence = producerConfig.get(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG);
    if (idempotence != null && !Boolean.parseBoolean(idempotence.toString())) {
      throw new IllegalArgumentException(
          "enable.idempotence must not be false; was " + idempotence);
    }
    Object acks = producerConfig.get(ProducerConfig.ACKS_CONFIG);
    if (acks != null && !("all".equals(acks.toString()) || "-1".equals(acks.toString()))) {
      throw new IllegalArgumentException("acks must be all; was " + acks);
    }
    return new KafkaDelivery(producerConfig);
  }

  @Override
  public CompletableFuture<DeliveryOutcome> deliver(PendingMessage pending) {
    OutboxMessage m = pending.message();
    ProducerRecord<byte[], byte[]> record =
        new ProducerRecord<>(
            m.destination(),
            m.key() == null ? null : m.key().getBytes(StandardCharsets.UTF_8),
            m.payload());
    m.headers()
        .forEach(
            (name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
    record
        .headers()
        .add(
            Outbox.IDEMPOTENCY_KEY_HEADER,
            pending.idempotencyKey().getBytes(StandardCharsets.US_ASCII));
    CompletableFuture<DeliveryOutcome> outcome = new CompletableFuture<>();
    try {
      producer.send(
          record,
          (metadata, failure) ->
              outcome.complete(failure == null ? DeliveryOutcome.DELIVERED : classify(failure)));
    } catch (KafkaException e) {
      // Raised before sending: serialization, a record over max.request.size, a closed producer.
      outcome.complete(classify(e));
    }
    return outcome;
  }

  static DeliveryOutcome classify(Exception failure) {
    String reason = failure.getClass().getSimpleName() + ": " + failure.getMessage();
    // Timeouts, leader changes and not-enough-replicas are RetriableExceptions.
    return failure instanceof RetriableException
        ? DeliveryOutcome.retry(reason)
        : DeliveryOutcome.dead(reason);
  }

  /** Flushes and closes the producer. */
  @Override
  public void close() {
    producer.close(Duration.ofSeconds(30));
  }
}

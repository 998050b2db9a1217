package dev.once.kafka;

import dev.once.internal.Arguments;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.BatchDriver;
import dev.once.messaging.MessageProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An idempotent Kafka consumer: one {@link KafkaConsumer} in a consumer group, polled on a thread
 * of its own, every record going through a once-messaging {@link MessageProcessor}, whose {@link
 * Acknowledgement} decides the offsets:
 *
 * <table>
 *   <caption>acknowledgements</caption>
 *   <tr><th>decision</th><th>on the consumer</th></tr>
 *   <tr><td>Ack (processed, duplicate, unguarded)</td><td>the record's offset is committed (synchronously,
 *       after each polled batch)</td></tr>
 *   <tr><td>DeadLetter, Reject</td><td>the record is produced to the dead-letter topic if one is configured
 *       (acknowledged by the broker), then its offset is committed</td></tr>
 *   <tr><td>Redeliver(delay) (in flight, transient, store down)</td><td>offsets before it are committed;
 *       the consumer seeks back to the record and pauses its partition for the delay, so the record
 *       (and those after it, in order) comes again</td></tr>
 * </table>
 *
 * <pre>{@code
 * KafkaIdempotentConsumer consumer = KafkaIdempotentConsumer.builder(
 *         Map.of("bootstrap.servers", "kafka:9092", "group.id", "billing"), List.of("orders"),
 *         orders.processor(handler))
 *     .deadLetterTopic("orders.dead")
 *     .start();
 * }</pre>
 *
 * <p>Offsets are committed only after the outcome is recorded, so a consumer that dies (or loses
 * its partitions in a rebalance) between the two leaves the record to be delivered again, and the
 * store answers that redelivery with the recorded outcome: no second effect. A handler that
 * outlives {@code max.poll.interval.ms} gets its consumer expelled from the group; the partition's
 * new owner finds the key in flight and waits (redelivery), and the late commit fails harmlessly.
 *
 * <p>Records of one consumer are processed one at a time, in partition order; run several consumers
 * in one group for parallelism. The consumer's {@code enable.auto.commit} is forced off and its
 * deserializers are {@code byte[]}: the fingerprint is taken over the raw value.
 */
public final class KafkaIdempotentConsumer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KafkaIdempotentConsumer.class);

  /** The header a dead-lettered record carries: why ({@code final-failure} or a reject reason). */
  public static final String REASON_HEADER = "x-once-reason";

  /** The header a dead-lettered final failure carries: its {@link dev.once.FinalFailure#code()}. */
  public static final String FAILURE_CODE_HEADER = "x-once-failure-code";

  /** The header a dead-lettered record carries: {@code topic/partition/offset} of the original. */
  public static final String ORIGIN_HEADER = "x-once-origin";

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final @Nullable KafkaProducer<byte[], byte[]> deadLetters;
  private final @Nullable String deadLetterTopic;
  private final Duration deadLetterTimeout;
  private final MessageProcessor<ConsumerRecord<byte[], byte[]>> processor;
  private final Duration pollTimeout;
  private final Thread thread;
  private final Map<TopicPartition, Long> pausedUntil = new HashMap<>();
  private final Map<TopicPartition, OffsetAndMetadata> toCommit = new HashMap<>();
  private volatile boolean running = true;

  private KafkaIdempotentConsumer(Builder b) {
    Map<String, Object> config = new HashMap<>(b.config);
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    config.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    this.consumer =
        new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    this.processor = b.processor;
    this.pollTimeout = b.pollTimeout;
    this.deadLetterTopic = b.deadLetterTopic;
    this.deadLetterTimeout = b.deadLetterTimeout;
    if (deadLetterTopic != null) {
      Map<String, Object> producerConfig = new HashMap<>();
      producerConfig.put(
          ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          config.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG));
      producerConfig.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
      producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
      producerConfig.putAll(b.producerConfig);
      this.deadLetters =
          new KafkaProducer<>(producerConfig, new ByteArraySerializer(), new ByteArraySerializer());
    } else {
      this.deadLetters = null;
    }
    consumer.subscribe(b.topics, new Rebalance());
    this.thread = new Thread(this::run, b.threadName);
    thread.setDaemon(true);
  }

  /**
   * A builder over the consumer's configuration ({@code bootstrap.servers} and {@code group.id}
   * required), the topics it subscribes to, and the processor every record goes through.
   */
  public static Builder builder(
      Map<String, ?> consumerConfig,
      Collection<String> topics,
      MessageProcessor<ConsumerRecord<byte[], byte[]>> processor) {
    return new Builder(consumerConfig, topics, processor);
  }

  private void run() {
    boolean clean = false;
    try {
      while (running) {
        resumeDue();
        ConsumerRecords<byte[], byte[]> records = consumer.poll(pollTimeout);
        for (TopicPartition tp : records.partitions()) {
          handle(tp, records.records(tp));
        }
        commit();
      }
      clean = true;
    } catch (WakeupException e) {
      clean = true; // close() woke the poll
    } finally {
      if (clean) {
        commit();
      }
      // Without a clean exit (an Error from the processor) nothing more is committed: what was
      // processed since the last commit is delivered again, to this group's next owner.
      closeClients();
    }
  }

  /**
   * Processes a partition's polled records in order, as many at a time as the processor takes (its
   * records claimed together), until all are answered or the partition was sought back.
   */
  private void handle(TopicPartition tp, List<ConsumerRecord<byte[], byte[]>> records) {
    new BatchDriver<>(processor, this::onProcessorFailure, (r, a) -> apply(tp, r, a))
        .drive(records); // stops where the partition was sought back: the rest comes again
  }

  private Acknowledgement onProcessorFailure(
      ConsumerRecord<byte[], byte[]> record, RuntimeException e) {
    LOG.error(
        "the message processor threw on {}/{}; redelivering the record",
        record.topic() + "-" + record.partition(),
        record.offset(),
        e);
    return new Acknowledgement.Redeliver(
        Duration.ofSeconds(1), Acknowledgement.RedeliverReason.TRANSIENT_FAILURE, e);
  }

  /** Applies one record's acknowledgement; {@code false} if the partition was sought back to it. */
  private boolean apply(
      TopicPartition tp, ConsumerRecord<byte[], byte[]> record, Acknowledgement a) {
    return a.accept(
        new Acknowledgement.Visitor<Boolean>() {
          @Override
          public Boolean ack(Acknowledgement.Ack ack) {
            return commit(tp, record);
          }

          @Override
          public Boolean redeliver(Acknowledgement.Redeliver redeliver) {
            KafkaIdempotentConsumer.this.redeliver(tp, record.offset(), redeliver.delay());
            return false;
          }

          @Override
          public Boolean deadLetter(Acknowledgement.DeadLetter deadLetter) {
            return deadLetterAndCommit(tp, record, "final-failure", deadLetter.failure().code());
          }

          @Override
          public Boolean reject(Acknowledgement.Reject reject) {
            return deadLetterAndCommit(
                tp,
                record,
                reject.reason().name().toLowerCase(Locale.ROOT).replace('_', '-'),
                null);
          }
        });
  }

  /**
   * Dead-letters the record, then commits past it; if the dead letter was not sent, seeks back to
   * it.
   */
  private boolean deadLetterAndCommit(
      TopicPartition tp,
      ConsumerRecord<byte[], byte[]> record,
      String reason,
      @Nullable String failureCode) {
    if (!deadLetter(record, reason, failureCode)) {
      redeliver(tp, record.offset(), Duration.ofSeconds(1));
      return false;
    }
    return commit(tp, record);
  }

  private boolean commit(TopicPartition tp, ConsumerRecord<byte[], byte[]> record) {
    toCommit.put(tp, new OffsetAndMetadata(record.offset() + 1));
    return true;
  }

  private void redeliver(TopicPartition tp, long offset, Duration delay) {
    consumer.seek(tp, offset);
    if (!delay.isZero()) {
      consumer.pause(List.of(tp));
      pausedUntil.put(tp, System.nanoTime() + delay.toNanos());
    }
  }

  /**
   * Produces the record to the dead-letter topic and waits for the broker's acknowledgement. A
   * failure leaves the record uncommitted; note that its redelivery is then a recorded duplicate,
   * which is acknowledged without being dead-lettered again (see docs/messaging.md, Kafka).
   */
  private boolean deadLetter(
      ConsumerRecord<byte[], byte[]> record, String reason, @Nullable String failureCode) {
    if (deadLetters == null) {
      return true;
    }
    ProducerRecord<byte[], byte[]> out =
        new ProducerRecord<>(
            deadLetterTopic,
            null,
            record.key(),
            record.value(),
            new RecordHeaders(record.headers().toArray()));
    out.headers().add(REASON_HEADER, reason.getBytes(StandardCharsets.UTF_8));
    out.headers()
        .add(
            ORIGIN_HEADER,
            (record.topic() + "/" + record.partition() + "/" + record.offset())
                .getBytes(StandardCharsets.UTF_8));
    if (failureCode != null) {
      out.headers().add(FAILURE_CODE_HEADER, failureCode.getBytes(StandardCharsets.UTF_8));
    }
    try {
      deadLetters.send(out).get(deadLetterTimeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (Exception e) {
      LOG.warn(
          "could not dead-letter {}/{}/{} to {}: {}",
          record.topic(),
          record.partition(),
          record.offset(),
          deadLetterTopic,
          e.toString());
      return false;
    }
  }

  private void resumeDue() {
    if (pausedUntil.isEmpty()) {
      return;
    }
    long now = System.nanoTime();
    List<TopicPartition> due = new ArrayList<>();
    pausedUntil
        .entrySet()
        .removeIf(
            e -> {
              if (now - e.getValue() >= 0) {
                due.add(e.getKey());
                return true;
              }
              return false;
            });
    if (!due.isEmpty()) {
      consumer.resume(due);
    }
  }

  private void commit() {
    if (toCommit.isEmpty()) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>(toCommit);
    toCommit.clear();
    try {
      consumer.commitSync(offsets);
    } catch (CommitFailedException | RebalanceInProgressException e) {
      // The partitions moved on (this consumer was too slow or the group is rebalancing): their
      // new owner starts from the last committed offsets and the store answers the redeliveries.
      LOG.info("offsets not committed, the group rebalanced: {}", e.getMessage());
    } catch (WakeupException e) {
      consumer.commitSync(offsets);
      throw e;
    }
  }

  private void closeClients() {
    try {
      consumer.close(Duration.ofSeconds(10));
    } catch (KafkaException e) {
      LOG.debug("closing the consumer: {}", e.toString());
    }
    if (deadLetters != null) {
      deadLetters.close(Duration.ofSeconds(10));
    }
  }

  /**
   * Stops polling, commits what was processed, leaves the group and closes the clients; waits up to
   * 30 s for the record in progress. Idempotent.
   */
  @Override
  public void close() {
    running = false;
    consumer.wakeup();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Whether the polling thread still runs (it ends on {@link #close()} or when the processor throws
   * an Error).
   */
  public boolean isRunning() {
    return thread.isAlive();
  }

  /**
   * Commits what was processed before partitions move to another consumer; forgets their pauses.
   */
  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      Map<TopicPartition, OffsetAndMetadata> revoked = new HashMap<>();
      for (TopicPartition tp : partitions) {
        OffsetAndMetadata o = toCommit.remove(tp);
        if (o != null) {
          revoked.put(tp, o);
        }
        pausedUntil.remove(tp);
      }
      if (!revoked.isEmpty()) {
        try {
          consumer.commitSync(revoked);
        } catch (KafkaException e) {
          LOG.info("offsets of revoked partitions not committed: {}", e.getMessage());
        }
      }
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      for (TopicPartition tp : partitions) {
        toCommit.remove(tp);
        pausedUntil.remove(tp);
      }
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
  }

  /** Options of a {@link KafkaIdempotentConsumer}. */
  public static final class Builder {

    private final Map<String, Object> config;
    private final List<String> topics;
    private final MessageProcessor<ConsumerRecord<byte[], byte[]>> processor;
    private Duration pollTimeout = Duration.ofMillis(200);
    private @Nullable String deadLetterTopic;
    private final Duration deadLetterTimeout = Duration.ofSeconds(30);
    private final Map<String, Object> producerConfig = new HashMap<>();
    private String threadName = "once-kafka-consumer";

    private Builder(
        Map<String, ?> consumerConfig,
        Collection<String> topics,
        MessageProcessor<ConsumerRecord<byte[], byte[]>> processor) {
      if (consumerConfig == null
          || consumerConfig.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG) == null
          || consumerConfig.get(ConsumerConfig.GROUP_ID_CONFIG) == null) {
        throw new IllegalArgumentException(
            "consumerConfig must set bootstrap.servers and group.id; was "
                + (consumerConfig == null ? null : consumerConfig.keySet()));
      }
      if (topics == null
          || topics.isEmpty()
          || topics.stream().anyMatch(t -> t == null || t.isBlank())) {
        throw new IllegalArgumentException(
            "topics must name at least one topic, none blank; was " + topics);
      }
      Arguments.present("processor", processor);
      this.config = new HashMap<>(consumerConfig);
      this.topics = List.copyOf(new HashSet<>(topics));
      this.processor = processor;
    }

    /** The longest one poll waits for records; default 200 ms. */
    public Builder pollTimeout(Duration pollTimeout) {
      this.pollTimeout = Arguments.positive("pollTimeout", pollTimeout, Duration.ofMinutes(1));
      return this;
    }

    /**
     * Where records that fail finally or are rejected go, with {@value #REASON_HEADER}, {@value
     * #ORIGIN_HEADER} and (for final failures) {@value #FAILURE_CODE_HEADER} headers; default none
     * (they are committed and dropped). Produced by an idempotent producer with {@code acks=all} on
     * the consumer's {@code bootstrap.servers}.
     */
    public Builder deadLetterTopic(String topic) {
      this.deadLetterTopic = Arguments.notBlank("deadLetterTopic", topic);
      return this;
    }

    /** Extra settings of the dead-letter producer (security, client id). */
    public Builder producerConfig(Map<String, ?> producerConfig) {
      Arguments.present("producerConfig", producerConfig);
      this.producerConfig.putAll(producerConfig);
      return this;
    }

    /** The polling thread's name; default {@code once-kafka-consumer}. */
    public Builder threadName(String threadName) {
      this.threadName = Arguments.notBlank("threadName", threadName);
      return this;
    }

    /** Creates the consumer, subscribes, and starts polling on its own thread. */
    public KafkaIdempotentConsumer start() {
      KafkaIdempotentConsumer c = new KafkaIdempotentConsumer(this);
      c.thread.start();
      return c;
    }
  }
}

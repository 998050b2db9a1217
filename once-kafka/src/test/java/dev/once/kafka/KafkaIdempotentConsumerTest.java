package dev.once.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.FinalFailure;
import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.MessageHandler;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.store.InMemoryStore;
import dev.once.tck.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against a real KRaft broker in this JVM; every test has its own topics and group. */
class KafkaIdempotentConsumerTest {

  static KafkaBroker broker;
  static Topics topics;
  static final AtomicInteger SEQ = new AtomicInteger();

  final Once once = Once.of(InMemoryStore.create());
  final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  final List<Acknowledgement> decisions = new CopyOnWriteArrayList<>();
  final List<KafkaIdempotentConsumer> consumers = new ArrayList<>();
  String topic;
  String group;

  @BeforeAll
  static void startBroker() throws Exception {
    broker = KafkaBroker.start();
    topics = new Topics(broker);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) {
      broker.close();
    }
  }

  @BeforeEach
  void names() {
    int n = SEQ.incrementAndGet();
    topic = "orders-" + n;
    group = "billing-" + n;
  }

  @AfterEach
  void closeConsumers() {
    consumers.forEach(KafkaIdempotentConsumer::close);
    once.close();
  }

  MessageProcessor<ConsumerRecord<byte[], byte[]>> processor(
      MessageHandler<ConsumerRecord<byte[], byte[]>> handler) {
    MessageProcessor<ConsumerRecord<byte[], byte[]>> real =
        MessageIdempotency.builder(once, KafkaRecords.READER)
            .scope(Scope.of("billing", "orders"))
            .inFlightRedeliveryDelay(Duration.ofMillis(100))
            .retryDelay(Duration.ofMillis(100))
            .build()
            .processor(handler);
    return record -> {
      Acknowledgement a = real.process(record);
      decisions.add(a);
      return a;
    };
  }

  MessageHandler<ConsumerRecord<byte[], byte[]>> counting(long sleepMillis) {
    return (record, context) -> {
      effects
          .computeIfAbsent(Topics.text(record.value()), k -> new AtomicInteger())
          .incrementAndGet();
      Thread.sleep(sleepMillis);
    };
  }

  KafkaIdempotentConsumer consumer(
      MessageProcessor<ConsumerRecord<byte[], byte[]>> processor, String... extra) {
    Map<String, Object> config =
        new java.util.HashMap<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                group,
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG,
                10_000,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                20));
    for (int i = 0; i < extra.length; i += 2) {
      config.put(extra[i], extra[i + 1]);
    }
    KafkaIdempotentConsumer c =
        KafkaIdempotentConsumer.builder(config, List.of(topic), processor)
            .deadLetterTopic(topic + ".dead")
            .pollTimeout(Duration.ofMillis(50))
            .start();
    consumers.add(c);
    return c;
  }

  long count(Class<? extends Acknowledgement> kind) {
    return decisions.stream().filter(kind::isInstance).count();
  }

  @Test
  void theSameMessageFiftyTimesAcrossFourConsumersHasOneEffect() throws Exception {
    broker.createTopic(topic, 4);
    broker.createTopic(topic + ".dead", 1);
    MessageProcessor<ConsumerRecord<byte[], byte[]>> processor = processor(counting(50));
    for (int i = 0; i < 4; i++) {
      consumer(processor);
    }
    try (KafkaProducer<byte[], byte[]> p = topics.producer()) {
      for (int i = 0; i < 50; i++) {
        // Different record keys spread the copies over every partition, hence every consumer.
        p.send(Topics.record(topic, "r" + i, "order-1", "charge order 1"));
      }
    }
    topics.awaitCommitted(group, topic, 50);
    assertThat(topics.committed(group, topic)).isEqualTo(50);
    assertThat(effects.get("charge order 1").get()).isEqualTo(1);
    assertThat(count(Acknowledgement.Ack.class)).isEqualTo(50);
  }

  @Test
  void aRebalanceDuringASlowHandlerCausesNoDoubleEffect() throws Exception {
    broker.createTopic(topic, 2);
    broker.createTopic(topic + ".dead", 1);
    // Message 3 outlives max.poll.interval.ms: its consumer is expelled mid-handler, and the
    // partition's next owner finds the key in flight.
    MessageHandler<ConsumerRecord<byte[], byte[]>> slow =
        (record, context) -> {
          String value = Topics.text(record.value());
          effects.computeIfAbsent(value, k -> new AtomicInteger()).incrementAndGet();
          Thread.sleep(value.equals("m3") ? 4_000 : 200);
        };
    MessageProcessor<ConsumerRecord<byte[], byte[]>> processor = processor(slow);
    String[] shortPoll = {
      ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG,
      "2500",
      ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
      "5"
    };
    KafkaIdempotentConsumer first = consumer(processor, shortPoll);
    int n = 30;
    try (KafkaProducer<byte[], byte[]> p = topics.producer()) {
      for (int i = 0; i < n; i++) {
        p.send(Topics.record(topic, "r" + i, "k" + i, "m" + i));
      }
    }
    Eventually.assertThat(
        "the first consumer is in a handler", Duration.ofSeconds(60), () -> !effects.isEmpty());
    CountDownLatch secondInAHandler = new CountDownLatch(1);
    consumer(
        record -> { // joins while the first is in a handler
          secondInAHandler.countDown();
          return processor.process(record);
        },
        shortPoll);
    assertThat(secondInAHandler.await(60, TimeUnit.SECONDS))
        .as("the second consumer got a partition")
        .isTrue();
    first.close(); // leaves while the second is in one
    consumer(processor, shortPoll); // and a third joins
    topics.awaitCommitted(group, topic, n);
    assertThat(topics.committed(group, topic)).isEqualTo(n);
    for (int i = 0; i < n; i++) {
      assertThat(effects.get("m" + i)).as("effects of m" + i).hasValue(1);
    }
  }

  @Test
  void aConsumerThatDiesBetweenEffectAndCommitIsReplayedNotRerun() throws Exception {
    broker.createTopic(topic, 1);
    broker.createTopic(topic + ".dead", 1);
    MessageProcessor<ConsumerRecord<byte[], byte[]>> processor = processor(counting(0));
    // The first consumer records message 3's outcome and dies before committing any offset of its
    // batch.
    MessageProcessor<ConsumerRecord<byte[], byte[]>> dying =
        record -> {
          Acknowledgement a = processor.process(record);
          if (Topics.text(record.value()).equals("m3")) {
            throw new Crash();
          }
          return a;
        };
    try (KafkaProducer<byte[], byte[]> p = topics.producer()) {
      for (int i = 0; i < 8; i++) {
        p.send(Topics.record(topic, "r", "k" + i, "m" + i));
      }
    }
    KafkaIdempotentConsumer first = consumer(dying);
    Eventually.assertThat(
        "the first consumer died", Duration.ofSeconds(60), () -> !first.isRunning());
    assertThat(effects.get("m3")).hasValue(1);
    long committedBeforeTheCrash = topics.committed(group, topic);
    assertThat(committedBeforeTheCrash).isLessThanOrEqualTo(3);

    consumer(processor);
    topics.awaitCommitted(group, topic, 8);
    for (int i = 0; i < 8; i++) {
      assertThat(effects.get("m" + i)).as("effects of m" + i).hasValue(1);
    }
    long replays =
        decisions.stream()
            .filter(
                a ->
                    a instanceof Acknowledgement.Ack ack
                        && ack.reason() == Acknowledgement.AckReason.DUPLICATE)
            .count();
    assertThat(replays)
        .as("redeliveries answered from the record")
        .isGreaterThanOrEqualTo(4 - committedBeforeTheCrash);
  }

  @Test
  void aTransientFailureIsRedeliveredUntilItSucceeds() throws Exception {
    broker.createTopic(topic, 1);
    broker.createTopic(topic + ".dead", 1);
    AtomicInteger attempts = new AtomicInteger();
    consumer(
        processor(
            (record, context) -> {
              if (attempts.incrementAndGet() <= 2) {
                throw new IllegalStateException("downstream busy");
              }
              effects
                  .computeIfAbsent(Topics.text(record.value()), k -> new AtomicInteger())
                  .incrementAndGet();
            }));
    topics.send(topic, "r", "flaky", "m");
    topics.send(topic, "r", "after", "n");
    topics.awaitCommitted(group, topic, 2);
    assertThat(attempts.get()).isEqualTo(4);
    assertThat(effects.get("m")).hasValue(1);
    assertThat(effects.get("n")).as("the record after it waited, in order").hasValue(1);
    assertThat(
            decisions.stream()
                .filter(
                    a ->
                        a instanceof Acknowledgement.Redeliver r
                            && r.reason() == Acknowledgement.RedeliverReason.TRANSIENT_FAILURE))
        .hasSize(2);
  }

  @Test
  void aFinalFailureIsRecordedCommittedAndDeadLetteredOnce() throws Exception {
    broker.createTopic(topic, 1);
    broker.createTopic(topic + ".dead", 1);
    AtomicInteger runs = new AtomicInteger();
    consumer(
        processor(
            (record, context) -> {
              runs.incrementAndGet();
              throw new FinalFailure("card-declined", "the card was declined");
            }));
    topics.send(topic, "r", "pay-1", "pay");
    topics.send(topic, "r", "pay-1", "pay"); // a duplicate: replayed, not dead-lettered again
    topics.send(topic, "r", null, "no key"); // keyed by topic/partition/offset, dead-lettered too
    topics.awaitCommitted(group, topic, 3);
    assertThat(runs.get()).isEqualTo(2);
    List<ConsumerRecord<byte[], byte[]>> dead = topics.readAll(topic + ".dead", 2);
    assertThat(dead).hasSize(2);
    ConsumerRecord<byte[], byte[]> first = dead.get(0);
    assertThat(Topics.text(first.value())).isEqualTo("pay");
    assertThat(
            Topics.text(first.headers().lastHeader(KafkaIdempotentConsumer.REASON_HEADER).value()))
        .isEqualTo("final-failure");
    assertThat(
            Topics.text(
                first.headers().lastHeader(KafkaIdempotentConsumer.FAILURE_CODE_HEADER).value()))
        .isEqualTo("card-declined");
    assertThat(
            Topics.text(first.headers().lastHeader(KafkaIdempotentConsumer.ORIGIN_HEADER).value()))
        .isEqualTo(topic + "/0/0");
    assertThat(Topics.text(first.headers().lastHeader("Idempotency-Key").value()))
        .isEqualTo("pay-1");
  }

  @Test
  void badOptionsAreRejectedByName() {
    MessageProcessor<ConsumerRecord<byte[], byte[]>> p =
        record -> new Acknowledgement.Ack(Acknowledgement.AckReason.PROCESSED);
    Map<String, Object> config =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            "127.0.0.1:1",
            ConsumerConfig.GROUP_ID_CONFIG,
            "g");
    assertThatThrownBy(() -> KafkaIdempotentConsumer.builder(Map.of(), List.of("t"), p))
        .hasMessageContaining("group.id");
    assertThatThrownBy(() -> KafkaIdempotentConsumer.builder(config, List.of(), p))
        .hasMessageContaining("topics");
    assertThatThrownBy(() -> KafkaIdempotentConsumer.builder(config, List.of("t"), null))
        .hasMessageContaining("processor");
    assertThatThrownBy(
            () ->
                KafkaIdempotentConsumer.builder(config, List.of("t"), p).pollTimeout(Duration.ZERO))
        .hasMessageContaining("pollTimeout");
    assertThatThrownBy(
            () -> KafkaIdempotentConsumer.builder(config, List.of("t"), p).deadLetterTopic(" "))
        .hasMessageContaining("deadLetterTopic");
  }

  /** What kills the first consumer's thread: an Error, which nothing catches. */
  static final class Crash extends Error {
    Crash() {
      super(
          "simulated crash between recording the outcome and committing the offset",
          null,
          false,
          false);
    }
  }
}

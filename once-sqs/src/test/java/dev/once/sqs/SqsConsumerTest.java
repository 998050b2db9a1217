package dev.once.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.ExecutionPolicy;
import dev.once.FinalFailure;
import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.ConsumerStats;
import dev.once.messaging.MessageHandler;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.store.InMemoryStore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * The consumer against ElasticMQ started in this JVM: one effect per message whatever SQS
 * redelivers.
 */
@Timeout(120)
class SqsConsumerTest {

  private final Once once = Once.of(InMemoryStore.create());
  private final AtomicInteger effects = new AtomicInteger();
  private final List<SqsConsumer> consumers = new ArrayList<>();
  private SqsClient sqs;
  private String queue;

  @BeforeEach
  void createQueue() {
    sqs = LocalSqs.client();
    queue = LocalSqs.newQueue("once-test");
  }

  @AfterEach
  void cleanUp() {
    consumers.forEach(SqsConsumer::close);
    once.close();
  }

  private MessageIdempotency.Builder<Message> messages() {
    return MessageIdempotency.builder(once, SqsMessages.READER)
        .scope(Scope.of("test", queue))
        .inFlightRedeliveryDelay(Duration.ofSeconds(1))
        .retryDelay(Duration.ofSeconds(1));
  }

  private SqsConsumer start(SqsConsumer.Builder builder) {
    SqsConsumer c = builder.receiveWait(Duration.ofSeconds(1)).start();
    consumers.add(c);
    return c;
  }

  private SqsConsumer start(MessageProcessor<Message> processor) {
    return start(SqsConsumer.builder(sqs, queue, processor));
  }

  private void send(String key, String body) {
    sqs.sendMessage(
        r ->
            r.queueUrl(queue)
                .messageBody(body)
                .messageAttributes(
                    key == null
                        ? Map.of()
                        : Map.of(
                            "Idempotency-Key",
                            MessageAttributeValue.builder()
                                .dataType("String")
                                .stringValue(key)
                                .build())));
  }

  private long total(ToLongFunction<ConsumerStats> counter) {
    return consumers.stream().mapToLong(c -> counter.applyAsLong(c.stats())).sum();
  }

  private final MessageHandler<Message> pay =
      (m, ctx) -> {
        Thread.sleep(20);
        effects.incrementAndGet();
      };

  @Test
  void fiftyCopiesAcrossFourConsumersHaveOneEffect() throws Exception {
    MessageIdempotency<Message> orders = messages().build();
    for (int i = 0; i < 4; i++) {
      start(orders.processor(pay));
    }
    String key = "order-" + UUID.randomUUID();
    for (int i = 0; i < 50; i++) {
      send(key, "{\"amount\":10}");
    }

    assertThat(LocalSqs.await(() -> total(s -> s.processed() + s.duplicates()) == 50)).isTrue();
    assertThat(effects).hasValue(1);
    assertThat(total(ConsumerStats::processed)).isEqualTo(1);
    assertThat(LocalSqs.await(() -> LocalSqs.depth(queue) == 0)).isTrue();
  }

  @Test
  void consumerThatDiedBetweenRecordAndDeleteIsReplayedWhenTheVisibilityTimeoutLapses()
      throws Exception {
    MessageIdempotency<Message> orders =
        messages().policy(ExecutionPolicy.builder().lease(Duration.ofSeconds(1)).build()).build();
    send("order-" + UUID.randomUUID(), "{}");
    // A consumer receives the message, has its effect recorded, and dies before deleting it.
    List<Message> received =
        sqs.receiveMessage(
                r ->
                    r.queueUrl(queue)
                        .visibilityTimeout(1)
                        .waitTimeSeconds(5)
                        .messageAttributeNames("All"))
            .messages();
    assertThat(received).hasSize(1);
    assertThat(orders.process(received.get(0), pay))
        .isEqualTo(new Acknowledgement.Ack(Acknowledgement.AckReason.PROCESSED));

    SqsConsumer survivor =
        start(
            SqsConsumer.builder(sqs, queue, orders.processor(pay))
                .visibilityTimeout(Duration.ofSeconds(1)));

    assertThat(LocalSqs.await(() -> survivor.stats().duplicates() == 1)).isTrue();
    assertThat(survivor.stats().redelivered()).isEqualTo(1);
    assertThat(effects).hasValue(1);
    assertThat(LocalSqs.await(() -> LocalSqs.depth(queue) == 0)).isTrue();
  }

  @Test
  void transientFailureReappearsAfterTheDelayAndThenSucceedsOnce() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    SqsConsumer consumer =
        start(
            messages()
                .build()
                .processor(
                    (m, ctx) -> {
                      if (attempts.incrementAndGet() == 1) {
                        throw new IOException("downstream unavailable");
                      }
                      effects.incrementAndGet();
                    }));

    send("order-" + UUID.randomUUID(), "{}");

    assertThat(LocalSqs.await(() -> consumer.stats().processed() == 1)).isTrue();
    assertThat(consumer.stats().redeliveries()).isEqualTo(1);
    assertThat(consumer.stats().redelivered()).isEqualTo(1);
    assertThat(attempts).hasValue(2);
    assertThat(effects).hasValue(1);
  }

  @Test
  void finalFailureIsRecordedDeletedAndDeadLetteredOnce() throws Exception {
    String dead = LocalSqs.newQueue("once-test-dead");
    AtomicInteger attempts = new AtomicInteger();
    SqsConsumer consumer =
        start(
            SqsConsumer.builder(
                    sqs,
                    queue,
                    messages()
                        .build()
                        .processor(
                            (m, ctx) -> {
                              attempts.incrementAndGet();
                              throw new FinalFailure("unknown-customer", "no such customer");
                            }))
                .deadLetterQueue(dead));
    String key = "order-" + UUID.randomUUID();

    send(key, "{}");
    assertThat(LocalSqs.await(() -> consumer.stats().deadLettered() == 1)).isTrue();
    send(key, "{}");
    assertThat(LocalSqs.await(() -> consumer.stats().duplicates() == 1)).isTrue();

    List<Message> letters =
        sqs.receiveMessage(
                r ->
                    r.queueUrl(dead)
                        .maxNumberOfMessages(10)
                        .waitTimeSeconds(1)
                        .messageAttributeNames("All"))
            .messages();
    assertThat(letters).hasSize(1);
    assertThat(
            letters
                .get(0)
                .messageAttributes()
                .get(SqsConsumer.FAILURE_CODE_ATTRIBUTE)
                .stringValue())
        .isEqualTo("unknown-customer");
    assertThat(letters.get(0).messageAttributes().get(SqsConsumer.REASON_ATTRIBUTE).stringValue())
        .isEqualTo("final-failure");
    assertThat(letters.get(0).messageAttributes().get("Idempotency-Key").stringValue())
        .isEqualTo(key);
    assertThat(attempts).hasValue(1);
    assertThat(LocalSqs.await(() -> LocalSqs.depth(queue) == 0)).isTrue();
  }

  @Test
  void inFlightDuplicateReappearsLaterAndIsThenAcknowledgedAsDuplicate() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    MessageIdempotency<Message> orders = messages().build();
    MessageHandler<Message> slow =
        (m, ctx) -> {
          started.countDown();
          release.await(60, TimeUnit.SECONDS);
          effects.incrementAndGet();
        };
    start(SqsConsumer.builder(sqs, queue, orders.processor(slow)).batchSize(1));
    start(SqsConsumer.builder(sqs, queue, orders.processor(slow)).batchSize(1));
    String key = "order-" + UUID.randomUUID();

    send(key, "{}");
    assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
    send(key, "{}");
    assertThat(LocalSqs.await(() -> total(ConsumerStats::redeliveries) >= 1)).isTrue();
    release.countDown();

    assertThat(
            LocalSqs.await(
                () ->
                    total(ConsumerStats::processed) == 1 && total(ConsumerStats::duplicates) == 1))
        .isTrue();
    assertThat(effects).hasValue(1);
  }

  @Test
  void longHandlerKeepsItsMessageInvisibleByExtendingTheVisibility() throws Exception {
    MessageIdempotency<Message> orders =
        messages().policy(ExecutionPolicy.builder().lease(Duration.ofSeconds(3)).build()).build();
    MessageHandler<Message> slow =
        (m, ctx) -> {
          Thread.sleep(8_000); // well past the 3 s visibility timeout
          effects.incrementAndGet();
        };
    start(
        SqsConsumer.builder(sqs, queue, orders.processor(slow))
            .visibilityTimeout(Duration.ofSeconds(3))
            .batchSize(1));
    start(
        SqsConsumer.builder(sqs, queue, orders.processor(slow))
            .visibilityTimeout(Duration.ofSeconds(3))
            .batchSize(1));

    send("order-" + UUID.randomUUID(), "{}");

    assertThat(LocalSqs.await(() -> total(ConsumerStats::processed) == 1)).isTrue();
    assertThat(total(ConsumerStats::delivered)).isEqualTo(1);
    assertThat(effects).hasValue(1);
  }

  @Test
  void rejectedMessageWithoutADeadLetterQueueIsDeleted() throws Exception {
    SqsConsumer consumer = start(messages().messageIdFallback(false).build().processor(pay));

    send(null, "no key");

    assertThat(LocalSqs.await(() -> consumer.stats().rejected() == 1)).isTrue();
    assertThat(LocalSqs.await(() -> LocalSqs.depth(queue) == 0)).isTrue();
    assertThat(effects).hasValue(0);
  }

  @Test
  void visibilityTimeoutShorterThanTheLeaseIsRefused() {
    MessageProcessor<Message> processor = messages().build().processor(pay); // lease 30 s

    assertThatThrownBy(
            () ->
                SqsConsumer.builder(sqs, queue, processor)
                    .visibilityTimeout(Duration.ofSeconds(10))
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("visibilityTimeout")
        .hasMessageContaining("lease");
  }

  @Test
  void badOptionsAreRejectedNamingTheOption() {
    MessageProcessor<Message> p = m -> new Acknowledgement.Ack(Acknowledgement.AckReason.PROCESSED);
    assertThatThrownBy(() -> SqsConsumer.builder(sqs, "", p))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("queueUrl");
    assertThatThrownBy(
            () -> SqsConsumer.builder(sqs, queue, p).visibilityTimeout(Duration.ofMillis(1500)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("visibilityTimeout");
    assertThatThrownBy(() -> SqsConsumer.builder(sqs, queue, p).receiveWait(Duration.ofSeconds(21)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("receiveWait");
    assertThatThrownBy(() -> SqsConsumer.builder(sqs, queue, p).batchSize(11))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("batchSize");
    assertThatThrownBy(() -> SqsConsumer.builder(sqs, queue, p).workers(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("workers");
  }
}

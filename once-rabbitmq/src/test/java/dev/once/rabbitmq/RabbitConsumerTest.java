package dev.once.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
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

/**
 * The consumer against the machine's RabbitMQ: one effect per message whatever the broker
 * redelivers.
 */
@Timeout(120)
class RabbitConsumerTest {

  private static final Duration SHORT = Duration.ofMillis(100);

  private final Once once = Once.of(InMemoryStore.create());
  private final AtomicInteger effects = new AtomicInteger();
  private final List<RabbitConsumer> consumers = new ArrayList<>();
  private final List<String> queues = new ArrayList<>();
  private Connection connection;
  private Channel channel;
  private String queue;

  @BeforeEach
  void declareQueue() throws Exception {
    connection = Rabbit.connect();
    channel = connection.createChannel();
    queue = declare("once-test-" + UUID.randomUUID(), Map.of());
  }

  @AfterEach
  void cleanUp() throws Exception {
    consumers.forEach(RabbitConsumer::close);
    if (channel != null) {
      for (String q : queues) {
        channel.queueDelete(q);
      }
      for (Duration d : List.of(SHORT, Duration.ofSeconds(1))) {
        channel.queueDelete(RabbitConsumer.retryQueue(queue, d));
      }
      connection.close();
    }
    once.close();
  }

  private String declare(String name, Map<String, Object> args) throws IOException {
    channel.queueDeclare(name, false, false, false, args);
    queues.add(name);
    return name;
  }

  private MessageIdempotency.Builder<Delivery> messages() {
    return MessageIdempotency.builder(once, AmqpMessages.READER)
        .scope(Scope.of("test", queue))
        .inFlightRedeliveryDelay(SHORT)
        .retryDelay(SHORT);
  }

  private RabbitConsumer start(RabbitConsumer.Builder builder) throws IOException {
    RabbitConsumer c = builder.start();
    consumers.add(c);
    return c;
  }

  private RabbitConsumer start(MessageProcessor<Delivery> processor) throws IOException {
    return start(RabbitConsumer.builder(connection, queue, processor));
  }

  private long total(ToLongFunction<ConsumerStats> counter) {
    return consumers.stream().mapToLong(c -> counter.applyAsLong(c.stats())).sum();
  }

  private final MessageHandler<Delivery> pay =
      (m, ctx) -> {
        Thread.sleep(20);
        effects.incrementAndGet();
      };

  @Test
  void fiftyCopiesAcrossFourConsumersHaveOneEffect() throws Exception {
    MessageIdempotency<Delivery> orders = messages().build();
    for (int i = 0; i < 4; i++) {
      start(orders.processor(pay));
    }
    String key = "order-" + UUID.randomUUID();
    for (int i = 0; i < 50; i++) {
      Rabbit.publish(channel, queue, key, null, "{\"amount\":10}");
    }

    assertThat(Rabbit.await(() -> total(s -> s.processed() + s.duplicates()) == 50)).isTrue();
    assertThat(effects).hasValue(1);
    assertThat(total(ConsumerStats::processed)).isEqualTo(1);
    assertThat(Rabbit.depth(channel, queue)).isZero();
  }

  @Test
  void consumerKilledBetweenRecordAndAcknowledgementIsReplayedByTheRedelivery() throws Exception {
    MessageIdempotency<Delivery> orders = messages().build();
    CountDownLatch recorded = new CountDownLatch(1);
    CountDownLatch killed = new CountDownLatch(1);
    Connection doomed = Rabbit.connect();
    start(
        RabbitConsumer.builder(
            doomed,
            queue,
            delivery -> {
              Acknowledgement a = orders.process(delivery, pay);
              recorded.countDown();
              await(killed); // the process dies here, before its acknowledgement reaches the broker
              return a;
            }));
    Rabbit.publish(channel, queue, "order-" + UUID.randomUUID(), null, "{}");
    assertThat(recorded.await(60, TimeUnit.SECONDS)).isTrue();

    doomed.abort();
    killed.countDown();
    RabbitConsumer survivor = start(orders.processor(pay));

    assertThat(Rabbit.await(() -> survivor.stats().duplicates() == 1)).isTrue();
    assertThat(survivor.stats().redelivered()).isEqualTo(1);
    assertThat(effects).hasValue(1);
  }

  @Test
  void transientFailureIsRedeliveredAfterTheDelayAndThenSucceedsOnce() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    RabbitConsumer consumer =
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

    Rabbit.publish(channel, queue, "order-" + UUID.randomUUID(), null, "{}");

    assertThat(Rabbit.await(() -> consumer.stats().processed() == 1)).isTrue();
    assertThat(consumer.stats().redeliveries()).isEqualTo(1);
    assertThat(attempts).hasValue(2);
    assertThat(effects).hasValue(1);
  }

  @Test
  void finalFailureIsRecordedAcknowledgedAndDeadLetteredOnce() throws Exception {
    String dead = declare(queue + ".dead", Map.of());
    AtomicInteger attempts = new AtomicInteger();
    RabbitConsumer consumer =
        start(
            RabbitConsumer.builder(
                    connection,
                    queue,
                    messages()
                        .build()
                        .processor(
                            (m, ctx) -> {
                              attempts.incrementAndGet();
                              throw new FinalFailure("unknown-customer", "no such customer");
                            }))
                .deadLetter("", dead));
    String key = "order-" + UUID.randomUUID();

    Rabbit.publish(channel, queue, key, null, "{}");
    Rabbit.publish(channel, queue, key, null, "{}");

    assertThat(
            Rabbit.await(
                () -> consumer.stats().deadLettered() == 1 && consumer.stats().duplicates() == 1))
        .isTrue();
    GetResponse letter = channel.basicGet(dead, true);
    assertThat(letter).isNotNull();
    assertThat(letter.getProps().getHeaders().get(RabbitConsumer.FAILURE_CODE_HEADER).toString())
        .isEqualTo("unknown-customer");
    assertThat(letter.getProps().getHeaders().get(RabbitConsumer.REASON_HEADER).toString())
        .isEqualTo("final-failure");
    assertThat(channel.basicGet(dead, true)).isNull();
    assertThat(attempts).hasValue(1);
    assertThat(Rabbit.depth(channel, queue)).isZero();
  }

  @Test
  void inFlightDuplicateIsRedeliveredLaterAndThenAcknowledgedAsDuplicate() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    MessageIdempotency<Delivery> orders = messages().build();
    MessageHandler<Delivery> slow =
        (m, ctx) -> {
          started.countDown();
          await(release);
          effects.incrementAndGet();
        };
    start(orders.processor(slow));
    start(orders.processor(slow));
    String key = "order-" + UUID.randomUUID();

    Rabbit.publish(channel, queue, key, null, "{}");
    assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();
    Rabbit.publish(channel, queue, key, null, "{}");
    assertThat(Rabbit.await(() -> total(ConsumerStats::redeliveries) >= 1)).isTrue();
    release.countDown();

    assertThat(
            Rabbit.await(
                () ->
                    total(ConsumerStats::processed) == 1 && total(ConsumerStats::duplicates) == 1))
        .isTrue();
    assertThat(effects).hasValue(1);
  }

  @Test
  void rejectedMessageGoesToTheQueuesOwnDeadLetterExchange() throws Exception {
    channel.queueDelete(queue);
    String dead = declare(queue + ".dead", Map.of());
    declare(queue, Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", dead));
    RabbitConsumer consumer = start(messages().build().processor(pay));

    Rabbit.publish(channel, queue, null, null, "no key, no message id");

    assertThat(Rabbit.await(() -> consumer.stats().rejected() == 1)).isTrue();
    assertThat(Rabbit.await(() -> depthOf(dead) == 1)).isTrue();
    assertThat(effects).hasValue(0);
  }

  @Test
  void messageIdIsTheKeyWhenThereIsNoHeader() throws Exception {
    RabbitConsumer consumer = start(messages().build().processor(pay));
    String id = "msg-" + UUID.randomUUID();

    Rabbit.publish(channel, queue, null, id, "{}");
    Rabbit.publish(channel, queue, null, id, "{}");

    assertThat(
            Rabbit.await(
                () -> consumer.stats().processed() == 1 && consumer.stats().duplicates() == 1))
        .isTrue();
    assertThat(effects).hasValue(1);
  }

  @Test
  void withoutDelayedRedeliveryATransientFailureIsRequeuedAtOnce() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    RabbitConsumer consumer =
        start(
            RabbitConsumer.builder(
                    connection,
                    queue,
                    messages()
                        .build()
                        .processor(
                            (m, ctx) -> {
                              if (attempts.incrementAndGet() == 1) {
                                throw new IOException("flaky");
                              }
                              effects.incrementAndGet();
                            }))
                .delayedRedelivery(false));

    Rabbit.publish(channel, queue, "order-" + UUID.randomUUID(), null, "{}");

    assertThat(Rabbit.await(() -> consumer.stats().processed() == 1)).isTrue();
    assertThat(consumer.stats().redelivered())
        .isEqualTo(1); // requeued: the broker marks it redelivered
    assertThat(effects).hasValue(1);
  }

  @Test
  void badOptionsAreRejectedNamingTheOption() {
    MessageProcessor<Delivery> p =
        d -> new Acknowledgement.Ack(Acknowledgement.AckReason.PROCESSED);
    assertThatThrownBy(() -> RabbitConsumer.builder(connection, " ", p))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("queue");
    assertThatThrownBy(() -> RabbitConsumer.builder(connection, queue, p).prefetch(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("prefetch");
    assertThatThrownBy(
            () -> RabbitConsumer.builder(connection, queue, p).confirmTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("confirmTimeout");
    assertThatThrownBy(
            () -> RabbitConsumer.builder(connection, queue, p).shutdownTimeout(Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("shutdownTimeout");
    assertThatThrownBy(
            () ->
                RabbitConsumer.builder(connection, queue, p).shutdownTimeout(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("shutdownTimeout");
  }

  private long depthOf(String q) {
    try {
      return Rabbit.depth(channel, q);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

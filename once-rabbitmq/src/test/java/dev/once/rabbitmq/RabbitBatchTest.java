package dev.once.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.MessageHandler;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.store.InMemoryStore;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The consumer's batches on the machine's RabbitMQ: what arrived while a batch ran is processed
 * together, a failing processor costs one message, and close() finishes what arrived before it.
 */
@Timeout(120)
class RabbitBatchTest {

  private final Once once = Once.of(InMemoryStore.create());
  private final AtomicInteger effects = new AtomicInteger();
  private final List<Integer> batches = new CopyOnWriteArrayList<>();
  private Connection connection;
  private Channel channel;
  private String queue;
  private RabbitConsumer consumer;

  @BeforeEach
  void declareQueue() throws Exception {
    connection = Rabbit.connect();
    channel = connection.createChannel();
    queue = "once-test-" + UUID.randomUUID();
    channel.queueDeclare(queue, false, false, false, null);
  }

  @AfterEach
  void cleanUp() throws Exception {
    if (consumer != null) {
      consumer.close();
    }
    if (channel != null) {
      channel.queueDelete(queue);
      channel.queueDelete(RabbitConsumer.retryQueue(queue, Duration.ofMillis(100)));
      connection.close();
    }
    once.close();
  }

  private MessageIdempotency<Delivery> messages() {
    return MessageIdempotency.builder(once, AmqpMessages.READER)
        .scope(Scope.of("test", queue))
        .retryDelay(Duration.ofMillis(100))
        .build();
  }

  /** The processor, recording the size of every batch it is given. */
  private MessageProcessor<Delivery> recording(MessageProcessor<Delivery> processor) {
    return new MessageProcessor<>() {
      @Override
      public Acknowledgement process(Delivery message) {
        return processor.process(message);
      }

      @Override
      public List<Acknowledgement> processAll(List<Delivery> messages) {
        batches.add(messages.size());
        return processor.processAll(messages);
      }
    };
  }

  private void publish(int count) throws Exception {
    for (int i = 0; i < count; i++) {
      Rabbit.publish(channel, queue, "order-" + UUID.randomUUID(), null, "{}");
    }
  }

  private final MessageHandler<Delivery> pay = (m, ctx) -> effects.incrementAndGet();

  @Test
  void deliveriesThatArriveWhileABatchRunsAreProcessedTogether() throws Exception {
    CountDownLatch allArrived = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    MessageHandler<Delivery> firstWaits =
        (m, ctx) -> {
          if (calls.getAndIncrement() == 0) {
            assertThat(allArrived.await(60, TimeUnit.SECONDS)).isTrue();
          }
          pay.handle(m, ctx);
        };
    consumer =
        RabbitConsumer.builder(connection, queue, recording(messages().processor(firstWaits)))
            .prefetch(64)
            .start();

    publish(20);
    assertThat(Rabbit.await(() -> consumer.stats().delivered() == 20)).isTrue();
    allArrived.countDown();

    assertThat(Rabbit.await(() -> consumer.stats().processed() == 20)).isTrue();
    assertThat(effects).hasValue(20);
    assertThat(batches.stream().mapToInt(Integer::intValue).sum()).isEqualTo(20);
    assertThat(batches).hasSizeLessThanOrEqualTo(2); // the first, then all that arrived meanwhile
    assertThat(Rabbit.await(() -> depth() == 0)).isTrue();
  }

  @Test
  void aRedeliveryInABatchDoesNotHoldBackTheRest() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    MessageHandler<Delivery> secondFailsOnce =
        (m, ctx) -> {
          if (attempts.incrementAndGet() == 2) {
            throw new java.io.IOException("downstream unavailable");
          }
          pay.handle(m, ctx);
        };
    publish(10);
    consumer =
        RabbitConsumer.builder(connection, queue, recording(messages().processor(secondFailsOnce)))
            .start();

    assertThat(Rabbit.await(() -> consumer.stats().processed() == 10)).isTrue();
    assertThat(consumer.stats().redeliveries()).isEqualTo(1);
    assertThat(effects).hasValue(10);
    assertThat(Rabbit.await(() -> depth() == 0)).isTrue();
  }

  @Test
  void aProcessorThatThrowsRequeuesTheFirstMessageAndGoesOnWithTheRest() throws Exception {
    MessageProcessor<Delivery> processor = messages().processor(pay);
    AtomicInteger calls = new AtomicInteger();
    MessageProcessor<Delivery> throwsOnce =
        new MessageProcessor<>() {
          @Override
          public Acknowledgement process(Delivery message) {
            return processor.process(message);
          }

          @Override
          public List<Acknowledgement> processAll(List<Delivery> messages) {
            if (calls.getAndIncrement() == 0) {
              throw new IllegalStateException("a processor bug");
            }
            return processor.processAll(messages);
          }
        };
    publish(5);
    consumer = RabbitConsumer.builder(connection, queue, throwsOnce).start();

    assertThat(Rabbit.await(() -> consumer.stats().processed() == 5)).isTrue();
    assertThat(consumer.stats().redeliveries()).isEqualTo(1);
    assertThat(consumer.stats().redelivered()).isEqualTo(1); // requeued: marked redelivered
    assertThat(effects).hasValue(5);
  }

  @Test
  void aConsumerStoppedByAnErrorGivesItsMessagesBackToTheOthers() throws Exception {
    // The error waits until all three are held here: else it could close the channel before the
    // last ones arrive, and they would reach the others without having been given back.
    CountDownLatch allHeld = new CountDownLatch(1);
    MessageProcessor<Delivery> broken =
        m -> {
          try {
            allHeld.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          throw new OutOfMemoryError("stands for a broken JVM");
        };
    RabbitConsumer stopped = RabbitConsumer.builder(connection, queue, broken).start();
    publish(3);
    assertThat(Rabbit.await(() -> stopped.stats().delivered() == 3)).isTrue();
    allHeld.countDown();

    consumer = RabbitConsumer.builder(connection, queue, messages().processor(pay)).start();

    assertThat(Rabbit.await(() -> consumer.stats().processed() == 3)).isTrue();
    assertThat(effects).hasValue(3);
    stopped.close();
  }

  @Test
  void closeFinishesAndAcknowledgesWhatArrivedBeforeIt() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    MessageHandler<Delivery> slow =
        (m, ctx) -> {
          started.countDown();
          Thread.sleep(50);
          pay.handle(m, ctx);
        };
    consumer = RabbitConsumer.builder(connection, queue, messages().processor(slow)).start();
    publish(10);
    assertThat(Rabbit.await(() -> consumer.stats().delivered() == 10)).isTrue();
    assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();

    consumer.close();

    assertThat(effects).hasValue(10);
    assertThat(consumer.stats().processed()).isEqualTo(10);
    assertThat(consumer.stats().failures()).isZero();
    assertThat(depth()).isZero(); // all acknowledged on the channel before it closed
  }

  @Test
  void closeStopsWaitingAfterTheShutdownTimeoutAndTheMessageComesBack() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    MessageHandler<Delivery> stuck =
        (m, ctx) -> {
          started.countDown();
          assertThat(release.await(60, TimeUnit.SECONDS)).isTrue();
          pay.handle(m, ctx);
        };
    consumer =
        RabbitConsumer.builder(connection, queue, messages().processor(stuck))
            .shutdownTimeout(Duration.ofMillis(200))
            .start();
    publish(1);
    assertThat(started.await(60, TimeUnit.SECONDS)).isTrue();

    consumer.close(); // returns with the handler still running

    assertThat(effects).hasValue(0);
    assertThat(Rabbit.await(() -> depth() == 1)).isTrue(); // unacknowledged: back in the queue
    release.countDown();
    assertThat(Rabbit.await(() -> consumer.stats().failures() == 1)).isTrue(); // its ack failed
  }

  private long depth() {
    try {
      return Rabbit.depth(channel, queue);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}

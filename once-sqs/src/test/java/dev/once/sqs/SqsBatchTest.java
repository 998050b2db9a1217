package dev.once.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.MessageHandler;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.store.InMemoryStore;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * The consumer's batches against ElasticMQ: a receive is processed and deleted together, a failure
 * costs one message, and a FIFO group keeps its order across a redelivery.
 */
@Timeout(120)
class SqsBatchTest {

  private final Once once = Once.of(InMemoryStore.create());
  private final List<String> effects = new CopyOnWriteArrayList<>();
  private final List<Integer> batches = new CopyOnWriteArrayList<>();
  private final SqsClient sqs = LocalSqs.client();
  private SqsConsumer consumer;

  @AfterEach
  void cleanUp() {
    if (consumer != null) {
      consumer.close();
    }
    once.close();
  }

  private MessageIdempotency<Message> messages(String queue) {
    return MessageIdempotency.builder(once, SqsMessages.READER)
        .scope(Scope.of("test", queue))
        .retryDelay(Duration.ofSeconds(1))
        .build();
  }

  /** The processor, recording the size of every batch it is given. */
  private MessageProcessor<Message> recording(MessageProcessor<Message> processor) {
    return new MessageProcessor<>() {
      @Override
      public Acknowledgement process(Message message) {
        return processor.process(message);
      }

      @Override
      public List<Acknowledgement> processAll(List<Message> messages) {
        batches.add(messages.size());
        return processor.processAll(messages);
      }

      @Override
      public java.util.Optional<Duration> lease() {
        return processor.lease();
      }
    };
  }

  private SqsConsumer start(String queue, MessageProcessor<Message> processor) {
    return SqsConsumer.builder(sqs, queue, processor).receiveWait(Duration.ofSeconds(1)).start();
  }

  private void send(String queue, String body, String group) {
    sqs.sendMessage(
        r -> {
          r.queueUrl(queue)
              .messageBody(body)
              .messageAttributes(
                  Map.of(
                      "Idempotency-Key",
                      MessageAttributeValue.builder()
                          .dataType("String")
                          .stringValue(queue + "/" + body)
                          .build()));
          if (group != null) {
            r.messageGroupId(group);
          }
        });
  }

  private final MessageHandler<Message> pay = (m, ctx) -> effects.add(m.body());

  @Test
  void aReceiveIsProcessedAsOneBatchAndDeletedTogether() throws Exception {
    String queue = LocalSqs.newQueue("once-test");
    for (int i = 0; i < 10; i++) {
      send(queue, "m" + i, null);
    }
    consumer = start(queue, recording(messages(queue).processor(pay)));

    assertThat(LocalSqs.await(() -> consumer.stats().processed() == 10)).isTrue();
    assertThat(effects).hasSize(10);
    assertThat(batches).contains(10); // ElasticMQ hands out all ten waiting messages at once
    assertThat(LocalSqs.await(() -> LocalSqs.depth(queue) == 0)).isTrue();
    assertThat(consumer.stats().failures()).isZero();
  }

  @Test
  void aTransientFailureInAReceiveRedeliversOnlyThatMessage() throws Exception {
    String queue = LocalSqs.newQueue("once-test");
    for (int i = 0; i < 5; i++) {
      send(queue, "m" + i, null);
    }
    Set<String> failed = ConcurrentHashMap.newKeySet();
    MessageHandler<Message> m2FailsOnce =
        (m, ctx) -> {
          if (m.body().equals("m2") && failed.add("m2")) {
            throw new IOException("downstream unavailable");
          }
          pay.handle(m, ctx);
        };
    consumer = start(queue, messages(queue).processor(m2FailsOnce));

    assertThat(LocalSqs.await(() -> consumer.stats().processed() == 5)).isTrue();
    assertThat(consumer.stats().redeliveries()).isEqualTo(1);
    assertThat(effects).containsExactlyInAnyOrder("m0", "m1", "m2", "m3", "m4");
    assertThat(LocalSqs.await(() -> LocalSqs.depth(queue) == 0)).isTrue();
  }

  @Test
  void aProcessorThatThrowsLeavesTheFirstMessageForLaterAndGoesOnWithTheRest() throws Exception {
    String queue = LocalSqs.newQueue("once-test");
    for (int i = 0; i < 5; i++) {
      send(queue, "m" + i, null);
    }
    MessageProcessor<Message> processor = messages(queue).processor(pay);
    AtomicInteger calls = new AtomicInteger();
    MessageProcessor<Message> throwsOnce =
        new MessageProcessor<>() {
          @Override
          public Acknowledgement process(Message message) {
            return processor.process(message);
          }

          @Override
          public List<Acknowledgement> processAll(List<Message> messages) {
            if (calls.getAndIncrement() == 0) {
              throw new IllegalStateException("a processor bug");
            }
            return processor.processAll(messages);
          }
        };
    consumer =
        SqsConsumer.builder(sqs, queue, throwsOnce)
            .visibilityTimeout(Duration.ofSeconds(1)) // no lease to outlast: a custom processor
            .receiveWait(Duration.ofSeconds(1))
            .start();

    assertThat(LocalSqs.await(() -> consumer.stats().processed() == 5)).isTrue();
    assertThat(consumer.stats().redeliveries()).isEqualTo(1);
    assertThat(consumer.stats().redelivered()).isEqualTo(1); // received a second time
    assertThat(effects).hasSize(5);
  }

  @Test
  void aFifoGroupKeepsItsOrderAcrossARedeliveryWhileOtherGroupsGoOn() throws Exception {
    String name = "once-test-" + UUID.randomUUID() + ".fifo";
    String queue =
        sqs.createQueue(
                r ->
                    r.queueName(name)
                        .attributes(
                            Map.of(
                                QueueAttributeName.FIFO_QUEUE, "true",
                                QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true")))
            .queueUrl();
    send(queue, "a1", "a");
    send(queue, "a2", "a");
    send(queue, "a3", "a");
    send(queue, "b1", "b");
    Set<String> failed = ConcurrentHashMap.newKeySet();
    MessageHandler<Message> a1FailsOnce =
        (m, ctx) -> {
          if (m.body().equals("a1") && failed.add("a1")) {
            throw new IOException("downstream unavailable");
          }
          pay.handle(m, ctx);
        };
    consumer = start(queue, messages(queue).processor(a1FailsOnce));

    assertThat(LocalSqs.await(() -> consumer.stats().processed() == 4)).isTrue();
    assertThat(effects.stream().filter(b -> b.startsWith("a"))).containsExactly("a1", "a2", "a3");
    assertThat(effects).containsExactlyInAnyOrder("a1", "a2", "a3", "b1");
    assertThat(effects.indexOf("b1")).isLessThan(effects.indexOf("a1")); // not held back by a
    assertThat(consumer.stats().redeliveries()).isEqualTo(1);
    assertThat(LocalSqs.await(() -> LocalSqs.depth(queue) == 0)).isTrue();
  }
}

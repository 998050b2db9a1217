package dev.once.sqs;

import dev.once.internal.Arguments;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.BatchDriver;
import dev.once.messaging.ConsumerCounters;
import dev.once.messaging.ConsumerStats;
import dev.once.messaging.MessageProcessor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

/**
 * An idempotent SQS consumer: worker threads long-poll the queue, every message goes through a
 * once-messaging {@link MessageProcessor}, and its {@link Acknowledgement} becomes SQS calls:
 *
 * <table>
 *   <caption>acknowledgements</caption>
 *   <tr><th>decision</th><th>SQS</th></tr>
 *   <tr><td>Ack</td><td>{@code DeleteMessageBatch}: a receive's acknowledged messages together, once
 *       all of the receive is processed</td></tr>
 *   <tr><td>Redeliver(delay)</td><td>{@code ChangeMessageVisibility} to the delay, rounded up to whole
 *       seconds: the message reappears then</td></tr>
 *   <tr><td>DeadLetter, Reject</td><td>{@code SendMessage} to the dead-letter queue if one is configured
 *       (with the attributes {@value #REASON_ATTRIBUTE} and {@value #FAILURE_CODE_ATTRIBUTE}), then
 *       {@code DeleteMessage}</td></tr>
 * </table>
 *
 * <p><b>Batches.</b> A receive's messages (up to {@link Builder#batchSize}) go to {@link
 * MessageProcessor#processAll} together, so the processors Once builds claim their records in one
 * store round trip. On a standard queue a redelivery does not hold back the rest of the receive
 * (SQS keeps no order there). On a FIFO queue (its URL ends in {@code .fifo}) each message group is
 * processed in order, and after a redelivery the group's later messages are made visible again
 * unprocessed: SQS returns them only after the redelivered one, so the group's order holds.
 *
 * <p><b>Visibility and the lease.</b> While a receive is processed, the consumer extends the
 * visibility of its messages not yet settled (one {@code ChangeMessageVisibilityBatch}) every third
 * of the visibility timeout, so a long handler's message never reappears at another consumer
 * mid-run. {@link Builder#start()} refuses a visibility timeout shorter than the processor's lease:
 * after a consumer dies, its message reappears one visibility timeout later, and by then the dead
 * consumer's lease must have ended so the redelivery takes over at once instead of bouncing as
 * in-flight.
 *
 * <pre>{@code
 * SqsConsumer consumer = SqsConsumer.builder(sqs, queueUrl, orders.processor(handler))
 *     .visibilityTimeout(Duration.ofSeconds(60))
 *     .workers(4)
 *     .deadLetterQueue(dlqUrl)
 *     .start();
 * }</pre>
 *
 * <p>A receive count above one ({@code ApproximateReceiveCount}) counts as redelivered in {@link
 * #stats()}; every message is claimed in the store regardless, because a producer's duplicate send
 * arrives as a new message.
 */
public final class SqsConsumer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(SqsConsumer.class);

  /**
   * The attribute a dead-lettered message carries: why ({@code final-failure} or a reject reason).
   */
  public static final String REASON_ATTRIBUTE = "x-once-reason";

  /**
   * The attribute a dead-lettered final failure carries: its {@link dev.once.FinalFailure#code()}.
   */
  public static final String FAILURE_CODE_ATTRIBUTE = "x-once-failure-code";

  private static final int MAX_VISIBILITY_SECONDS = 43_200;

  private static final List<MessageSystemAttributeName> SYSTEM_ATTRIBUTES =
      List.of(
          MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT,
          MessageSystemAttributeName.MESSAGE_GROUP_ID);

  private final SqsClient sqs;
  private final String queueUrl;
  private final boolean fifo;
  private final MessageProcessor<Message> processor;
  private final int visibilitySeconds;
  private final int waitSeconds;
  private final int batchSize;
  private final @Nullable String deadLetterQueueUrl;
  private final ConsumerCounters counters = new ConsumerCounters();
  private final ScheduledExecutorService heartbeats;
  private final List<Thread> workers = new ArrayList<>();
  private volatile boolean running = true;

  private SqsConsumer(Builder b) {
    this.sqs = b.sqs;
    this.queueUrl = b.queueUrl;
    this.fifo = b.queueUrl.endsWith(".fifo");
    this.processor = b.processor;
    this.visibilitySeconds = (int) b.visibilityTimeout.toSeconds();
    this.waitSeconds = (int) b.receiveWait.toSeconds();
    this.batchSize = b.batchSize;
    this.deadLetterQueueUrl = b.deadLetterQueueUrl;
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "once-sqs-visibility");
              t.setDaemon(true);
              return t;
            });
    executor.setRemoveOnCancelPolicy(true);
    this.heartbeats = executor;
    for (int i = 0; i < b.workers; i++) {
      Thread t = new Thread(this::poll, "once-sqs-consumer-" + i);
      t.setDaemon(true);
      workers.add(t);
    }
    workers.forEach(Thread::start);
  }

  /** Starts building a consumer of the queue at {@code queueUrl}. */
  public static Builder builder(
      SqsClient sqs, String queueUrl, MessageProcessor<Message> processor) {
    return new Builder(sqs, queueUrl, processor);
  }

  /** What this consumer has done so far. */
  public ConsumerStats stats() {
    return counters.snapshot();
  }

  private void poll() {
    while (running) {
      List<Message> received;
      try {
        received =
            sqs.receiveMessage(
                    r ->
                        r.queueUrl(queueUrl)
                            .maxNumberOfMessages(batchSize)
                            .waitTimeSeconds(waitSeconds)
                            .visibilityTimeout(visibilitySeconds)
                            .messageAttributeNames("All")
                            .messageSystemAttributeNames(SYSTEM_ATTRIBUTES))
                .messages();
      } catch (SdkException e) {
        if (running) {
          log.warn("receiving from {} failed; retrying in a second: {}", queueUrl, e.toString());
          pause();
        }
        continue;
      }
      if (!received.isEmpty()) {
        try {
          new Receipt(received).process();
        } catch (Error e) {
          log.error(
              "a worker of {} stopped on an error; the messages it held reappear after their"
                  + " visibility timeout",
              queueUrl,
              e);
          throw e;
        }
      }
    }
  }

  /**
   * The messages of one receive, from processing to their last SQS call: what is not yet settled
   * has its visibility extended, and the acknowledged ones are deleted together at the end.
   */
  private final class Receipt {
    /** By receipt handle: what the visibility heartbeat extends. */
    private final Map<String, Message> unsettled = new ConcurrentHashMap<>();

    private final List<Message> received;
    private final List<Message> acknowledged = new ArrayList<>();

    Receipt(List<Message> received) {
      this.received = received;
      for (Message m : received) {
        String count = m.attributes().get(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT);
        counters.delivered(count != null && !"1".equals(count));
        unsettled.put(m.receiptHandle(), m);
      }
    }

    void process() {
      long period = Math.max(1, visibilitySeconds * 1000L / 3);
      ScheduledFuture<?> heartbeat =
          heartbeats.scheduleAtFixedRate(this::extend, period, period, TimeUnit.MILLISECONDS);
      try {
        BatchDriver<Message> driver =
            new BatchDriver<>(processor, SqsConsumer.this::onProcessorFailure, this::settle);
        for (List<Message> group : fifo ? byGroup(received) : List.of(received)) {
          int settled = driver.drive(group);
          if (settled < group.size()) {
            // A FIFO group's message goes back for redelivery: the group's later messages must
            // not run before it. Visible again at once, they still come after it, because SQS
            // holds back a group while one of its messages is in flight.
            release(group.subList(settled, group.size()));
          }
        }
        deleteAcknowledged();
      } finally {
        heartbeat.cancel(false);
      }
    }

    private boolean settle(Message m, Acknowledgement a) {
      counters.acknowledged(a);
      if (a instanceof Acknowledgement.Ack) {
        acknowledged.add(m); // deleted with the others at the end, one call for the receive
        return true;
      }
      try {
        carryOut(m, a);
      } catch (SdkException e) {
        // Not settled: it reappears after its visibility timeout, and the store answers then.
        counters.failed();
        log.warn(
            "could not acknowledge a message on {} ({}): {}",
            queueUrl,
            a.getClass().getSimpleName(),
            e.toString());
      }
      unsettled.remove(m.receiptHandle());
      return !(fifo && a instanceof Acknowledgement.Redeliver);
    }

    private void deleteAcknowledged() {
      if (acknowledged.isEmpty()) {
        return;
      }
      List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>(acknowledged.size());
      for (int i = 0; i < acknowledged.size(); i++) {
        entries.add(
            DeleteMessageBatchRequestEntry.builder()
                .id(Integer.toString(i))
                .receiptHandle(acknowledged.get(i).receiptHandle())
                .build());
      }
      try {
        List<BatchResultErrorEntry> failed =
            sqs.deleteMessageBatch(r -> r.queueUrl(queueUrl).entries(entries)).failed();
        for (BatchResultErrorEntry f : failed) {
          counters.failed();
          log.warn(
              "could not delete an acknowledged message on {} ({}); it reappears after its visibility timeout",
              queueUrl,
              f.code());
        }
      } catch (SdkException e) {
        acknowledged.forEach(m -> counters.failed());
        log.warn(
            "could not delete {} acknowledged messages on {}; they reappear after their visibility timeout: {}",
            acknowledged.size(),
            queueUrl,
            e.toString());
      }
      acknowledged.forEach(m -> unsettled.remove(m.receiptHandle()));
    }

    /**
     * Synchronized with {@link #extend}, so that a heartbeat under way cannot make a released
     * message invisible again (which would hold up its FIFO group for a visibility timeout).
     */
    private synchronized void release(List<Message> messages) {
      messages.forEach(m -> unsettled.remove(m.receiptHandle()));
      changeVisibility(messages, 0);
    }

    /** The heartbeat: keeps what is not settled invisible while the receive is processed. */
    private synchronized void extend() {
      changeVisibility(List.copyOf(unsettled.values()), visibilitySeconds);
    }
  }

  /** One {@code ChangeMessageVisibilityBatch} call; a failure only logged (see the callers). */
  private void changeVisibility(List<Message> messages, int seconds) {
    if (messages.isEmpty()) {
      return;
    }
    List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>(messages.size());
    for (int i = 0; i < messages.size(); i++) {
      entries.add(
          ChangeMessageVisibilityBatchRequestEntry.builder()
              .id(Integer.toString(i))
              .receiptHandle(messages.get(i).receiptHandle())
              .visibilityTimeout(seconds)
              .build());
    }
    try {
      List<BatchResultErrorEntry> failed =
          sqs.changeMessageVisibilityBatch(r -> r.queueUrl(queueUrl).entries(entries)).failed();
      if (!failed.isEmpty()) {
        log.debug(
            "changing the visibility of {} messages on {} failed: {}",
            failed.size(),
            queueUrl,
            failed.get(0).code());
      }
    } catch (SdkException e) {
      log.debug("changing the visibility of messages on {} failed: {}", queueUrl, e.toString());
    }
  }

  /** A receive's messages by FIFO message group, each group in receive order. */
  private static Collection<List<Message>> byGroup(List<Message> received) {
    Map<String, List<Message>> groups = new LinkedHashMap<>();
    for (Message m : received) {
      String group = m.attributes().getOrDefault(MessageSystemAttributeName.MESSAGE_GROUP_ID, "");
      groups.computeIfAbsent(group, g -> new ArrayList<>()).add(m);
    }
    return groups.values();
  }

  private Acknowledgement onProcessorFailure(Message m, RuntimeException e) {
    log.error(
        "the message processor of {} threw; the message reappears after its visibility timeout",
        queueUrl,
        e);
    return new Acknowledgement.Redeliver(
        Duration.ofSeconds(visibilitySeconds),
        Acknowledgement.RedeliverReason.TRANSIENT_FAILURE,
        e);
  }

  private void carryOut(Message m, Acknowledgement a) {
    a.accept(
        new Acknowledgement.Visitor<Void>() {
          @Override
          public Void ack(Acknowledgement.Ack ack) {
            delete(m);
            return null;
          }

          @Override
          public Void redeliver(Acknowledgement.Redeliver redeliver) {
            int seconds =
                (int) Math.min(MAX_VISIBILITY_SECONDS, (redeliver.delay().toMillis() + 999) / 1000);
            sqs.changeMessageVisibility(
                x ->
                    x.queueUrl(queueUrl)
                        .receiptHandle(m.receiptHandle())
                        .visibilityTimeout(seconds));
            return null;
          }

          @Override
          public Void deadLetter(Acknowledgement.DeadLetter deadLetter) {
            SqsConsumer.this.deadLetter(m, "final-failure", deadLetter.failure().code());
            return null;
          }

          @Override
          public Void reject(Acknowledgement.Reject reject) {
            SqsConsumer.this.deadLetter(m, reject.reason().name().toLowerCase(Locale.ROOT), null);
            return null;
          }
        });
  }

  private void deadLetter(Message m, String reason, @Nullable String failureCode) {
    if (deadLetterQueueUrl != null) {
      Map<String, MessageAttributeValue> attributes = new HashMap<>(m.messageAttributes());
      attributes.put(REASON_ATTRIBUTE, text(reason));
      if (failureCode != null) {
        attributes.put(FAILURE_CODE_ATTRIBUTE, text(failureCode));
      }
      sqs.sendMessage(
          r -> r.queueUrl(deadLetterQueueUrl).messageBody(m.body()).messageAttributes(attributes));
    } else {
      log.warn(
          "dropping a message from {} ({}): no dead-letter queue is configured", queueUrl, reason);
    }
    delete(m);
  }

  private static MessageAttributeValue text(String value) {
    return MessageAttributeValue.builder().dataType("String").stringValue(value).build();
  }

  private void delete(Message m) {
    sqs.deleteMessage(r -> r.queueUrl(queueUrl).receiptHandle(m.receiptHandle()));
  }

  private static void pause() {
    try {
      Thread.sleep(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Stops polling and waits for the workers to finish the messages they hold (at most a receive
   * wait plus a handler run). Never closes the {@link SqsClient}.
   */
  @Override
  public void close() {
    running = false;
    for (Thread t : workers) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(waitSeconds + 30L));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    heartbeats.shutdownNow();
  }

  /** Builds and starts an {@link SqsConsumer}. */
  public static final class Builder {
    private final SqsClient sqs;
    private final String queueUrl;
    private final MessageProcessor<Message> processor;
    private Duration visibilityTimeout = Duration.ofSeconds(30);
    private Duration receiveWait = Duration.ofSeconds(1);
    private int batchSize = 10;
    private int workers = 1;
    private @Nullable String deadLetterQueueUrl;

    private Builder(SqsClient sqs, String queueUrl, MessageProcessor<Message> processor) {
      this.sqs = Objects.requireNonNull(sqs, "sqs");
      this.queueUrl = Arguments.notBlank("queueUrl", queueUrl);
      this.processor = Objects.requireNonNull(processor, "processor");
    }

    /**
     * How long a received message stays invisible to other consumers, and by how much each
     * extension pushes it while the handler runs: whole seconds, 1 s to 12 h, at least the
     * processor's lease (checked by {@link #start()}); default 30 s, the engine's default lease.
     */
    public Builder visibilityTimeout(Duration visibilityTimeout) {
      if (visibilityTimeout == null
          || visibilityTimeout.getNano() != 0
          || visibilityTimeout.getSeconds() < 1
          || visibilityTimeout.getSeconds() > MAX_VISIBILITY_SECONDS) {
        throw new IllegalArgumentException(
            "visibilityTimeout must be whole seconds between 1 s and 12 h, was "
                + visibilityTimeout);
      }
      this.visibilityTimeout = visibilityTimeout;
      return this;
    }

    /**
     * How long one receive waits for messages (long polling): whole seconds, 0 to 20 s; default 1
     * s.
     */
    public Builder receiveWait(Duration receiveWait) {
      if (receiveWait == null
          || receiveWait.getNano() != 0
          || receiveWait.isNegative()
          || receiveWait.getSeconds() > 20) {
        throw new IllegalArgumentException(
            "receiveWait must be whole seconds between 0 and 20, was " + receiveWait);
      }
      this.receiveWait = receiveWait;
      return this;
    }

    /** How many messages one receive asks for: 1 to 10; default 10. */
    public Builder batchSize(int batchSize) {
      this.batchSize = Arguments.between("batchSize", batchSize, 1, 10);
      return this;
    }

    /** How many threads poll and process, each one receive at a time: 1 to 256; default 1. */
    public Builder workers(int workers) {
      this.workers = Arguments.between("workers", workers, 1, 256);
      return this;
    }

    /**
     * Where final failures and rejected messages are sent before they are deleted (default: none,
     * they are dropped and logged).
     */
    public Builder deadLetterQueue(String deadLetterQueueUrl) {
      this.deadLetterQueueUrl = Arguments.notBlank("deadLetterQueue", deadLetterQueueUrl);
      return this;
    }

    /**
     * Starts the workers.
     *
     * @throws IllegalStateException if the visibility timeout is shorter than the processor's lease
     */
    public SqsConsumer start() {
      processor
          .lease()
          .ifPresent(
              lease -> {
                if (visibilityTimeout.compareTo(lease) < 0) {
                  throw new IllegalStateException(
                      "visibilityTimeout ("
                          + visibilityTimeout
                          + ") must not be shorter than the lease ("
                          + lease
                          + "): a dead consumer's message would come back while its lease still holds the key");
                }
              });
      return new SqsConsumer(this);
    }
  }
}

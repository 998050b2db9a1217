package dev.once.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.once.internal.Arguments;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.BatchDriver;
import dev.once.messaging.ConsumerCounters;
import dev.once.messaging.ConsumerStats;
import dev.once.messaging.MessageProcessor;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An idempotent RabbitMQ consumer: one channel with manual acknowledgements, on which every
 * delivery goes through a once-messaging {@link MessageProcessor} and its {@link Acknowledgement}
 * becomes the broker's:
 *
 * <table>
 *   <caption>acknowledgements</caption>
 *   <tr><th>decision</th><th>on the channel</th></tr>
 *   <tr><td>Ack</td><td>{@code basic.ack}</td></tr>
 *   <tr><td>Redeliver(delay)</td><td>published to the retry queue for that delay (publisher-confirmed), then
 *       {@code basic.ack}; the retry queue dead-letters it back to the queue when its TTL ends. With
 *       delayed redelivery off, or a zero delay: {@code basic.nack} with requeue</td></tr>
 *   <tr><td>DeadLetter, Reject</td><td>published to the dead-letter exchange if one is configured, then
 *       {@code basic.ack}; otherwise {@code basic.reject} without requeue, which the queue's own
 *       {@code x-dead-letter-exchange} receives if it has one</td></tr>
 * </table>
 *
 * <pre>{@code
 * RabbitConsumer consumer = RabbitConsumer.builder(connection, "orders", orders.processor(handler))
 *     .prefetch(32)
 *     .deadLetter("", "orders.dead")
 *     .start();
 * }</pre>
 *
 * <p>The retry queue for a delay of {@code d} is {@link #retryQueue(String, Duration)}: durable,
 * with {@code x-message-ttl} {@code d}, dead-lettering to the default exchange with the queue's
 * name. One queue per delay keeps expiry in order (RabbitMQ expires only the head of a queue).
 *
 * <p>The redelivered flag is counted in {@link #stats()} and logged, but never used to skip the
 * store: a duplicate may also come from a producer that published twice, which the broker does not
 * mark, so every delivery is claimed (one store round trip).
 *
 * <p><b>Batches.</b> The channel's deliveries are processed in arrival order on the consumer's own
 * thread, a batch at a time: the first delivery and every one that arrived while the previous batch
 * ran (at most the prefetch) go to {@link MessageProcessor#processAll} together, so the processors
 * Once builds claim their records in one store round trip and record the outcomes without waiting
 * for each in turn. An idle consumer does not wait to fill a batch: a lone delivery is processed at
 * once. A redelivery does not hold back the batch's later deliveries (RabbitMQ keeps no order
 * across a requeue or a retry queue). Run several consumers (each its own channel) for parallelism.
 */
public final class RabbitConsumer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RabbitConsumer.class);

  /** The header a dead-lettered message carries: why ({@code final-failure} or a reject reason). */
  public static final String REASON_HEADER = "x-once-reason";

  /** The header a dead-lettered final failure carries: its {@link dev.once.FinalFailure#code()}. */
  public static final String FAILURE_CODE_HEADER = "x-once-failure-code";

  private final Channel channel;
  private final String queue;
  private final MessageProcessor<Delivery> processor;
  private final @Nullable String deadLetterExchange;
  private final @Nullable String deadLetterRoutingKey;
  private final boolean delayedRedelivery;
  private final long confirmTimeoutMillis;
  private final Set<String> retryQueues = ConcurrentHashMap.newKeySet();
  private final ConsumerCounters counters = new ConsumerCounters();
  private final BatchDriver<Delivery> driver;

  /**
   * Deliveries that arrived and wait for the worker; at most the prefetch, which the broker never
   * exceeds while they are unacknowledged.
   */
  private final BlockingQueue<Delivery> arrived = new LinkedBlockingQueue<>();

  private final Thread worker;
  private final Duration shutdownTimeout;
  private final String consumerTag;

  /** Put behind the last delivery by {@link #close()}: the worker stops when it reaches it. */
  private static final Delivery STOP = new Delivery(null, null, null);

  private RabbitConsumer(Builder b) throws IOException {
    this.queue = b.queue;
    this.processor = b.processor;
    this.deadLetterExchange = b.deadLetterExchange;
    this.deadLetterRoutingKey = b.deadLetterRoutingKey;
    this.delayedRedelivery = b.delayedRedelivery;
    this.confirmTimeoutMillis = b.confirmTimeout.toMillis();
    this.shutdownTimeout = b.shutdownTimeout;
    this.driver = new BatchDriver<>(processor, this::onProcessorFailure, this::settle);
    this.channel = b.connection.createChannel();
    this.worker = new Thread(this::work, "once-rabbitmq-" + queue);
    worker.setDaemon(true);
    try {
      channel.basicQos(b.prefetch);
      channel.confirmSelect();
      worker.start();
      this.consumerTag =
          channel.basicConsume(
              queue,
              false,
              (tag, delivery) -> {
                counters.delivered(delivery.getEnvelope().isRedeliver());
                arrived.add(delivery);
              },
              tag -> log.warn("the broker cancelled the consumer of {}", queue));
    } catch (IOException | RuntimeException e) {
      stopWorker();
      closeQuietly();
      throw e;
    }
  }

  /** Starts building a consumer of {@code queue} on a new channel of {@code connection}. */
  public static Builder builder(
      Connection connection, String queue, MessageProcessor<Delivery> processor) {
    return new Builder(connection, queue, processor);
  }

  /** The retry queue that delays redeliveries to {@code queue} by {@code delay}. */
  public static String retryQueue(String queue, Duration delay) {
    return queue + ".once-retry." + delay.toMillis() + "ms";
  }

  /** What this consumer has done so far. */
  public ConsumerStats stats() {
    return counters.snapshot();
  }

  /**
   * The worker: takes what has arrived, a batch at a time, until {@link #close()}. If an {@link
   * Error} ends it (the processors Once builds let a broken JVM's errors through), the channel is
   * closed, so the broker gives what this consumer held to the others instead of leaving it
   * unacknowledged here for good.
   */
  private void work() {
    List<Delivery> batch = new ArrayList<>();
    try {
      while (true) {
        batch.add(arrived.take());
        arrived.drainTo(batch);
        int stop = batch.indexOf(STOP);
        if (stop >= 0) {
          batch.subList(stop, batch.size()).clear(); // close() came: finish what arrived before it
        }
        if (!batch.isEmpty()) {
          driver.drive(batch);
        }
        if (stop >= 0) {
          return;
        }
        batch.clear();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Error e) {
      log.error(
          "the consumer of {} stopped on an error; closing its channel so that the broker"
              + " redelivers the messages it held",
          queue,
          e);
      closeQuietly();
      throw e;
    }
  }

  private Acknowledgement onProcessorFailure(Delivery delivery, RuntimeException e) {
    log.error("the message processor of {} threw; requeueing the message", queue, e);
    return new Acknowledgement.Redeliver(
        Duration.ZERO, Acknowledgement.RedeliverReason.TRANSIENT_FAILURE, e);
  }

  /** Carries out one delivery's acknowledgement; always goes on with the batch. */
  private boolean settle(Delivery delivery, Acknowledgement a) {
    counters.acknowledged(a);
    try {
      carryOut(delivery, a);
    } catch (IOException | TimeoutException | RuntimeException e) {
      // Unacknowledged: the broker redelivers it when the channel closes, and the store answers
      // then.
      counters.failed();
      log.warn(
          "could not acknowledge a message on {} ({}): {}",
          queue,
          a.getClass().getSimpleName(),
          e.toString());
    } catch (InterruptedException e) {
      counters.failed();
      Thread.currentThread().interrupt();
    }
    return true;
  }

  private void carryOut(Delivery delivery, Acknowledgement a)
      throws IOException, TimeoutException, InterruptedException {
    long tag = delivery.getEnvelope().getDeliveryTag();
    a.accept(
            new Acknowledgement.Visitor<Settle>() {
              @Override
              public Settle ack(Acknowledgement.Ack ack) {
                if (delivery.getEnvelope().isRedeliver()) {
                  log.debug(
                      "a redelivery on {} was acknowledged ({}): an earlier delivery went unacknowledged",
                      queue,
                      ack);
                }
                return () -> channel.basicAck(tag, false);
              }

              @Override
              public Settle redeliver(Acknowledgement.Redeliver redeliver) {
                if (!delayedRedelivery || redeliver.delay().isZero()) {
                  return () -> channel.basicNack(tag, false, true);
                }
                return () -> {
                  publishConfirmed(
                      "",
                      declareRetryQueue(redeliver.delay()),
                      delivery.getProperties(),
                      delivery.getBody());
                  channel.basicAck(tag, false);
                };
              }

              @Override
              public Settle deadLetter(Acknowledgement.DeadLetter deadLetter) {
                return () ->
                    RabbitConsumer.this.deadLetter(
                        delivery, "final-failure", deadLetter.failure().code());
              }

              @Override
              public Settle reject(Acknowledgement.Reject reject) {
                return () ->
                    RabbitConsumer.this.deadLetter(
                        delivery, reject.reason().name().toLowerCase(java.util.Locale.ROOT), null);
              }
            })
        .run();
  }

  /**
   * The broker calls that carry out an acknowledgement. An acknowledgement is mapped to one before
   * it runs because the channel's calls throw checked exceptions that a visitor cannot.
   */
  @FunctionalInterface
  private interface Settle {
    void run() throws IOException, TimeoutException, InterruptedException;
  }

  private void deadLetter(Delivery delivery, String reason, @Nullable String failureCode)
      throws IOException, TimeoutException, InterruptedException {
    long tag = delivery.getEnvelope().getDeliveryTag();
    if (deadLetterExchange == null) {
      channel.basicReject(tag, false);
      return;
    }
    AMQP.BasicProperties props = delivery.getProperties();
    Map<String, Object> headers =
        props.getHeaders() == null ? new HashMap<>() : new HashMap<>(props.getHeaders());
    headers.put(REASON_HEADER, reason);
    if (failureCode != null) {
      headers.put(FAILURE_CODE_HEADER, failureCode);
    }
    // deadLetter(exchange, routingKey) sets both.
    publishConfirmed(
        deadLetterExchange,
        Objects.requireNonNull(deadLetterRoutingKey),
        props.builder().headers(headers).build(),
        delivery.getBody());
    channel.basicAck(tag, false);
  }

  private void publishConfirmed(
      String exchange, String routingKey, AMQP.BasicProperties props, byte[] body)
      throws IOException, TimeoutException, InterruptedException {
    channel.basicPublish(exchange, routingKey, props, body);
    channel.waitForConfirmsOrDie(confirmTimeoutMillis);
  }

  private String declareRetryQueue(Duration delay) throws IOException {
    String name = retryQueue(queue, delay);
    if (!retryQueues.contains(name)) {
      Map<String, Object> args = new HashMap<>();
      args.put("x-message-ttl", delay.toMillis());
      args.put("x-dead-letter-exchange", "");
      args.put("x-dead-letter-routing-key", queue);
      channel.queueDeclare(name, true, false, false, args);
      retryQueues.add(name);
    }
    return name;
  }

  /**
   * Cancels the subscription, lets the worker finish the deliveries that arrived before (at most
   * {@link Builder#shutdownTimeout}), and closes the channel. What is still unacknowledged then
   * (deliveries not reached, or a batch still running after the timeout, whose acknowledgements
   * fail) the broker redelivers, and the store replays or runs it.
   */
  @Override
  public void close() {
    try {
      if (channel.isOpen()) {
        channel.basicCancel(consumerTag);
      }
    } catch (IOException | RuntimeException e) {
      log.debug("cancelling the consumer of {} failed: {}", queue, e.toString());
    }
    stopWorker();
    closeQuietly();
  }

  private void stopWorker() {
    arrived.add(STOP);
    try {
      if (!shutdownTimeout.isZero()) { // join(0) would wait forever
        worker.join(shutdownTimeout.toMillis());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (worker.isAlive()) {
      log.warn(
          "the consumer of {} still runs a batch after {}; closing its channel",
          queue,
          shutdownTimeout);
    }
  }

  private void closeQuietly() {
    try {
      if (channel.isOpen()) {
        channel.close();
      }
    } catch (IOException | TimeoutException | RuntimeException e) {
      log.debug("closing the channel of {} failed: {}", queue, e.toString());
    }
  }

  /** Builds and starts a {@link RabbitConsumer}. */
  public static final class Builder {
    private final Connection connection;
    private final String queue;
    private final MessageProcessor<Delivery> processor;
    private int prefetch = 16;
    private @Nullable String deadLetterExchange;
    private @Nullable String deadLetterRoutingKey;
    private boolean delayedRedelivery = true;
    private Duration confirmTimeout = Duration.ofSeconds(10);
    private Duration shutdownTimeout = Duration.ofSeconds(10);

    private Builder(Connection connection, String queue, MessageProcessor<Delivery> processor) {
      this.connection = Objects.requireNonNull(connection, "connection");
      this.queue = Arguments.notBlank("queue", queue);
      this.processor = Objects.requireNonNull(processor, "processor");
    }

    /**
     * How many unacknowledged deliveries the broker sends ahead ({@code basic.qos}); 1 to 65535,
     * default 16.
     */
    public Builder prefetch(int prefetch) {
      this.prefetch = Arguments.between("prefetch", prefetch, 1, 65_535);
      return this;
    }

    /**
     * Where final failures and rejected messages go, with the headers {@value #REASON_HEADER} and
     * {@value #FAILURE_CODE_HEADER} (default: none, see the class comment). {@code ""} is the
     * default exchange, where the routing key names a queue.
     */
    public Builder deadLetter(String exchange, String routingKey) {
      this.deadLetterExchange = Objects.requireNonNull(exchange, "exchange");
      this.deadLetterRoutingKey = Objects.requireNonNull(routingKey, "routingKey");
      return this;
    }

    /**
     * Whether redeliveries wait out their delay in a retry queue (default {@code true}); with
     * {@code false} they are nacked with requeue and come back at once.
     */
    public Builder delayedRedelivery(boolean delayedRedelivery) {
      this.delayedRedelivery = delayedRedelivery;
      return this;
    }

    /** How long a republish waits for the broker's confirm (default 10 s, 1 ms to 1 h). */
    public Builder confirmTimeout(Duration confirmTimeout) {
      this.confirmTimeout =
          Arguments.between(
              "confirmTimeout", confirmTimeout, Duration.ofMillis(1), Duration.ofHours(1));
      return this;
    }

    /**
     * How long {@link RabbitConsumer#close()} waits for the deliveries that arrived before it to be
     * processed and acknowledged (default 10 s, 0 to 1 h); the channel closes then regardless.
     */
    public Builder shutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout =
          Arguments.between("shutdownTimeout", shutdownTimeout, Duration.ZERO, Duration.ofHours(1));
      return this;
    }

    /** Opens the channel and starts consuming. */
    public RabbitConsumer start() throws IOException {
      return new RabbitConsumer(this);
    }
  }
}

package dev.once.bench.messaging;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import dev.once.messaging.ConsumerStats;
import dev.once.messaging.MessageProcessor;
import dev.once.messaging.MessageReader;
import dev.once.rabbitmq.AmqpMessages;
import dev.once.rabbitmq.RabbitConsumer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** The machine's RabbitMQ at 127.0.0.1:5672 (guest/guest). */
final class RabbitBroker implements Broker<Delivery> {

  private final ExecutorService dispatch;
  private final Connection connection;
  private final Channel channel;

  /**
   * @param threads the connection's consumer dispatch threads, one per consumer as in the figures
   *     before 2026-11-27, when handlers ran on them (the client's default, twice the cores, capped
   *     how many blocked on the store at once); each consumer now has a worker of its own, and the
   *     dispatch threads only hand deliveries to it
   */
  RabbitBroker(int threads) throws Exception {
    dispatch = Executors.newFixedThreadPool(threads);
    ConnectionFactory factory = new ConnectionFactory();
    factory.setHost("127.0.0.1");
    factory.setUsername("guest");
    factory.setPassword("guest");
    connection = factory.newConnection(dispatch, "once-bench");
    channel = connection.createChannel();
    channel.confirmSelect();
  }

  @Override
  public MessageReader<Delivery> reader() {
    return AmqpMessages.READER;
  }

  @Override
  public String newQueue() throws Exception {
    String name = "once-bench-" + UUID.randomUUID();
    channel.queueDeclare(name, false, false, false, null);
    return name;
  }

  @Override
  public void publish(String queue, String prefix, int count) throws Exception {
    byte[] body = "{\"amount\":1000,\"currency\":\"EUR\"}".getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < count; i++) {
      AMQP.BasicProperties props =
          new AMQP.BasicProperties.Builder()
              .headers(Map.of("Idempotency-Key", prefix + "-" + i))
              .build();
      channel.basicPublish("", queue, props, body);
    }
    channel.waitForConfirmsOrDie(60_000);
  }

  @Override
  public Consumers consume(String queue, MessageProcessor<Delivery> processor, int consumers)
      throws Exception {
    List<RabbitConsumer> started = new ArrayList<>();
    for (int i = 0; i < consumers; i++) {
      started.add(RabbitConsumer.builder(connection, queue, processor).prefetch(64).start());
    }
    return new Consumers() {
      @Override
      public java.util.function.Supplier<List<ConsumerStats>> stats() {
        return () -> started.stream().map(RabbitConsumer::stats).toList();
      }

      @Override
      public void close() {
        started.forEach(RabbitConsumer::close);
      }
    };
  }

  @Override
  public void deleteQueue(String queue) throws Exception {
    channel.queueDelete(queue);
  }

  @Override
  public void close() throws Exception {
    connection.close();
    dispatch.shutdownNow();
  }
}

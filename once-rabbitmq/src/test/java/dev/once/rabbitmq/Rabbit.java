package dev.once.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.once.tck.RequiredServices;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/** The machine's RabbitMQ (127.0.0.1:5672, guest/guest) and the small things tests do on it. */
final class Rabbit {

  private Rabbit() {}

  /** A new connection; skips the test loudly (fails on CI) when RabbitMQ is unreachable. */
  static Connection connect() throws IOException, TimeoutException {
    RequiredServices.requireReachable("RabbitMQ", "127.0.0.1", 5672);
    ConnectionFactory factory = new ConnectionFactory();
    factory.setHost("127.0.0.1");
    factory.setPort(5672);
    factory.setUsername("guest");
    factory.setPassword("guest");
    factory.setAutomaticRecoveryEnabled(false);
    return factory.newConnection("once-rabbitmq-test");
  }

  /** Publishes {@code body} with the key header (if not null) and a message id (if not null). */
  static void publish(Channel channel, String queue, String key, String messageId, String body)
      throws IOException {
    AMQP.BasicProperties props =
        new AMQP.BasicProperties.Builder()
            .messageId(messageId)
            .headers(key == null ? Map.of() : Map.of("Idempotency-Key", key))
            .build();
    channel.basicPublish("", queue, props, body.getBytes(StandardCharsets.UTF_8));
  }

  static long depth(Channel channel, String queue) throws IOException {
    return channel.queueDeclarePassive(queue).getMessageCount();
  }

  /** Waits up to a minute for the condition; false if it never held. */
  static boolean await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(20);
    }
    return condition.getAsBoolean();
  }
}

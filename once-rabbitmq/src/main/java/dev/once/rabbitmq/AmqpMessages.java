package dev.once.rabbitmq;

import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.LongString;
import dev.once.messaging.MessageReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * Reads AMQP deliveries for once-messaging: the {@code message-id} property, application headers
 * (long strings, strings, UTF-8 byte arrays, numbers and booleans as text), and the body.
 */
public final class AmqpMessages implements MessageReader<Delivery> {

  /** The reader. */
  public static final AmqpMessages READER = new AmqpMessages();

  private AmqpMessages() {}

  @Override
  public Optional<String> messageId(Delivery message) {
    return Optional.ofNullable(message.getProperties().getMessageId());
  }

  @Override
  public Optional<String> header(Delivery message, String name) {
    Map<String, Object> headers = message.getProperties().getHeaders();
    if (headers == null) {
      return Optional.empty();
    }
    Object value = headers.get(name);
    if (value instanceof LongString
        || value instanceof String
        || value instanceof Number
        || value instanceof Boolean) {
      return Optional.of(value.toString());
    }
    if (value instanceof byte[] bytes) {
      return Optional.of(new String(bytes, StandardCharsets.UTF_8));
    }
    return Optional.empty();
  }

  @Override
  public byte[] payload(Delivery message) {
    return message.getBody();
  }
}

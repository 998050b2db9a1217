package dev.once.sqs;

import dev.once.messaging.MessageReader;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/**
 * Reads SQS messages for once-messaging: the {@code MessageId} SQS assigned, string (and number)
 * message attributes as headers, and the body's UTF-8 bytes.
 */
public final class SqsMessages implements MessageReader<Message> {

  /** The reader. */
  public static final SqsMessages READER = new SqsMessages();

  private SqsMessages() {}

  @Override
  public Optional<String> messageId(Message message) {
    return Optional.ofNullable(message.messageId());
  }

  @Override
  public Optional<String> header(Message message, String name) {
    MessageAttributeValue value =
        message.hasMessageAttributes() ? message.messageAttributes().get(name) : null;
    return value == null ? Optional.empty() : Optional.ofNullable(value.stringValue());
  }

  @Override
  public byte[] payload(Message message) {
    return message.body() == null ? new byte[0] : message.body().getBytes(StandardCharsets.UTF_8);
  }
}

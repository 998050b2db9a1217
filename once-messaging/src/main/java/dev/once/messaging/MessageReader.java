package dev.once.messaging;

import java.util.Optional;

/**
 * How to read one broker's messages: their id, a header, and the payload. Each broker module
 * supplies one for its own message type (an AMQP {@code Delivery}, an SQS {@code Message}, a Kafka
 * {@code ConsumerRecord}), so that keys and fingerprints are taken the same way on every broker.
 *
 * @param <M> the broker's message type
 */
public interface MessageReader<M> {

  /**
   * The message's id, if it has one: the producer's (AMQP {@code message-id}) or the broker's (SQS
   * {@code MessageId}). Used as the key when the message carries none of its own.
   */
  Optional<String> messageId(M message);

  /** The textual value of a header (an application header or message attribute), if present. */
  Optional<String> header(M message, String name);

  /** The payload, never null; the default fingerprint is taken over these bytes. */
  byte[] payload(M message);
}

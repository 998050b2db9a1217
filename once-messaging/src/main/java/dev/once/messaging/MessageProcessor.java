package dev.once.messaging;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Decides the acknowledgement of one message after doing its work: what a broker consumer calls for
 * every delivery, then maps onto its broker's ack, nack or delete. Built by {@link
 * MessageIdempotency#processor} and {@link TransactionalMessageIdempotency#processor}.
 *
 * @param <M> the broker's message type
 */
@FunctionalInterface
public interface MessageProcessor<M> {

  /** Processes the message; never throws for anything the message or its handler did. */
  Acknowledgement process(M message);

  /**
   * Processes a broker consumer's batch (a Kafka partition's poll, an SQS receive, the RabbitMQ
   * deliveries at hand), in order, as {@link #process} would one by one, and answers the
   * acknowledgements of a non-empty prefix of them: all, or fewer when it stopped after a {@link
   * Acknowledgement.Redeliver} (the later messages must not run before the redelivered one) or at a
   * message it leaves for another call. The caller applies the answers in order and calls again
   * with the messages after them, unless the last was a redelivery on a broker that keeps order
   * (Kafka, an SQS FIFO group): {@link BatchDriver} is that loop. The processors Once builds claim
   * the messages' records together (one store round trip where the store batches) and record their
   * outcomes without waiting for each in turn; the default processes one at a time.
   *
   * @throws IllegalArgumentException if {@code messages} is empty
   */
  default List<Acknowledgement> processAll(List<M> messages) {
    if (messages.isEmpty()) {
      throw new IllegalArgumentException("messages must not be empty");
    }
    List<Acknowledgement> acks = new ArrayList<>(messages.size());
    for (M message : messages) {
      Acknowledgement a = process(message);
      acks.add(a);
      if (a instanceof Acknowledgement.Redeliver) {
        break;
      }
    }
    return acks;
  }

  /**
   * The lease a message's record is held under while it is processed, if known: a broker whose
   * redelivery timer runs while a consumer holds a message (the SQS visibility timeout) is checked
   * against it. The processors Once builds report their policy's lease.
   */
  default Optional<Duration> lease() {
    return Optional.empty();
  }
}

package dev.once.messaging;

import java.time.Duration;
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
   * The lease a message's record is held under while it is processed, if known: a broker whose
   * redelivery timer runs while a consumer holds a message (the SQS visibility timeout) is checked
   * against it. The processors Once builds report their policy's lease.
   */
  default Optional<Duration> lease() {
    return Optional.empty();
  }
}

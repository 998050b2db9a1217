package dev.once.messaging;

/**
 * Decides the acknowledgement of one message after doing its work: what a broker consumer calls
 * for every delivery, then maps onto its broker's ack, nack or delete. Built by
 * {@link MessageIdempotency#processor} and {@link TransactionalMessageIdempotency#processor}.
 *
 * @param <M> the broker's message type
 */
@FunctionalInterface
public interface MessageProcessor<M> {

  /** Processes the message; never throws for anything the message or its handler did. */
  Acknowledgement process(M message);
}

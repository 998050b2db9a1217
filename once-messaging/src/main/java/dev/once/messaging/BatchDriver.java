package dev.once.messaging;

import java.util.List;
import java.util.Objects;

/**
 * Carries a broker's batch of messages (a Kafka partition's poll, an SQS receive, the RabbitMQ
 * deliveries that arrived while the last batch ran) through a {@link MessageProcessor}: calls
 * {@link MessageProcessor#processAll} with the messages not yet answered, settles each answer in
 * order, and calls again with the rest, until every message is settled or the broker stops the
 * batch. One loop for every broker consumer, so that what a processor may answer (a non-empty
 * prefix) is checked in one place.
 *
 * @param <M> the broker's message type
 */
public final class BatchDriver<M> {

  /** How a broker consumer carries out one message's acknowledgement. */
  @FunctionalInterface
  public interface Settler<M> {
    /**
     * Carries out {@code a} for {@code message}; {@code false} stops the batch here (the broker
     * sends the rest again, as Kafka does after seeking back to a redelivered record).
     */
    boolean settle(M message, Acknowledgement a);
  }

  /** What a broker consumer answers for a message when its processor threw or misanswered. */
  @FunctionalInterface
  public interface OnFailure<M> {
    /**
     * The acknowledgement for {@code message}, the first not yet answered when {@code error} came
     * out of the processor. The processors Once builds throw only for such a first message (its key
     * could not be read); a custom processor may have failed anywhere, and this message stands for
     * the batch's rest, which the next call processes again.
     */
    Acknowledgement acknowledgement(M message, RuntimeException error);
  }

  private final MessageProcessor<M> processor;
  private final OnFailure<M> onFailure;
  private final Settler<M> settler;

  /**
   * @param processor answers the messages
   * @param onFailure the answer for the first unanswered message when the processor throws
   * @param settler carries out each answer in order
   */
  public BatchDriver(MessageProcessor<M> processor, OnFailure<M> onFailure, Settler<M> settler) {
    this.processor = Objects.requireNonNull(processor, "processor");
    this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
    this.settler = Objects.requireNonNull(settler, "settler");
  }

  /**
   * Processes and settles {@code messages} in order.
   *
   * @return how many were handed to the settler: all, or fewer if it stopped the batch (the one it
   *     stopped at included)
   */
  public int drive(List<M> messages) {
    int from = 0;
    while (from < messages.size()) {
      List<M> rest = messages.subList(from, messages.size());
      List<Acknowledgement> acks;
      try {
        acks = processor.processAll(rest);
        if (acks.isEmpty() || acks.size() > rest.size()) {
          throw new IllegalStateException(
              "the processor answered " + acks.size() + " of " + rest.size() + " messages");
        }
        for (Acknowledgement a : acks) {
          if (a == null) {
            throw new IllegalStateException("the processor answered null for a message");
          }
        }
      } catch (RuntimeException e) {
        acks = List.of(onFailure.acknowledgement(rest.get(0), e));
      }
      for (Acknowledgement a : acks) {
        if (!settler.settle(messages.get(from++), a)) {
          return from;
        }
      }
    }
    return from;
  }
}

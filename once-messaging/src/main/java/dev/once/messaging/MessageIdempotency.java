package dev.once.messaging;

import dev.once.ExecutionPolicy;
import dev.once.Once;
import java.util.Objects;

/**
 * Idempotent message consumption, written once for every broker: the messaging twin of {@code
 * HttpIdempotency}. Each message's key (a header, a function of the message, or its id) and scope
 * name a record; its payload is its fingerprint. The first delivery runs the handler and records
 * the outcome; every redelivery or duplicate is acknowledged without running.
 *
 * <pre>{@code
 * MessageIdempotency<Delivery> orders = MessageIdempotency.builder(once, AmqpMessages.READER)
 *     .scope(Scope.of("billing", "orders"))
 *     .key(KeyExtractor.header("order-id"))
 *     .build();
 * Acknowledgement a = orders.process(delivery, (message, context) -> bill(message));
 * }</pre>
 *
 * <p>The effect and the record are two writes: a consumer that dies between them leaves the record
 * in progress, and once its lease ends the redelivery runs the handler again (at-least-once, with
 * {@link dev.once.ExecutionContext#stolen()} true). When the effect is a write to a relational
 * database, {@link TransactionalMessageIdempotency} closes that window.
 *
 * <p>Immutable and thread-safe: share one per subscription.
 *
 * @param <M> the broker's message type
 */
public final class MessageIdempotency<M> {

  private final Once once;
  private final MessageSemantics<M> semantics;

  private MessageIdempotency(Once once, MessageSemantics<M> semantics) {
    this.once = once;
    this.semantics = semantics;
  }

  /** A builder over the engine, for messages read by {@code reader}. */
  public static <M> Builder<M> builder(Once once, MessageReader<M> reader) {
    return new Builder<>(once, reader);
  }

  /**
   * Processes one delivery: runs {@code handler} if this is the first delivery of its key, and says
   * how to acknowledge it. Never throws for anything the message or the handler did (an {@link
   * Error} from the handler propagates after the key is released).
   */
  public Acknowledgement process(M message, MessageHandler<M> handler) {
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(handler, "handler");
    MessageSemantics.Identification identification = semantics.identify(message);
    if (identification instanceof MessageSemantics.Refused r) {
      return r.reject();
    }
    return semantics.run(
        once,
        (MessageSemantics.Target) identification,
        MessageSemantics.Unit.NONE,
        context -> handler.handle(message, context));
  }

  /** This consumer bound to a handler, for a broker consumer to call per delivery. */
  public MessageProcessor<M> processor(MessageHandler<M> handler) {
    Objects.requireNonNull(handler, "handler");
    return semantics.processor(message -> process(message, handler));
  }

  /**
   * The execution policy messages run under (its lease is what a broker's redelivery timer must
   * respect).
   */
  public ExecutionPolicy policy() {
    return semantics.policy();
  }

  /**
   * Builds a {@link MessageIdempotency}. The policy defaults to the engine's ({@link
   * Once#defaults()}).
   */
  public static final class Builder<M> extends MessageOptions<M, Builder<M>> {
    private final Once once;

    private Builder(Once once, MessageReader<M> reader) {
      super(reader);
      this.once = Objects.requireNonNull(once, "once");
    }

    /**
     * @throws IllegalStateException if no scope was given
     */
    public MessageIdempotency<M> build() {
      return new MessageIdempotency<>(once, semantics(policy != null ? policy : once.defaults()));
    }
  }
}

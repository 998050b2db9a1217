package dev.once.messaging;

import dev.once.ExecutionPolicy;
import dev.once.Once;
import dev.once.store.RecordId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

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

  /**
   * Processes a broker consumer's batch (a partition's poll, an SQS receive) as {@link
   * MessageProcessor#processAll} says: their records are claimed together (one store round trip
   * where the store batches), the handler runs for each winner in order, and the outcomes are
   * recorded without the next handler waiting for them; all are recorded before this returns. A key
   * that comes twice in {@code messages} ends a claim batch, so its second delivery is answered by
   * the first's outcome.
   */
  public List<Acknowledgement> processAll(List<M> messages, MessageHandler<M> handler) {
    Objects.requireNonNull(handler, "handler");
    if (messages.isEmpty()) {
      throw new IllegalArgumentException("messages must not be empty");
    }
    List<Acknowledgement> acks = new ArrayList<>(messages.size());
    int start = 0;
    while (start < messages.size()) {
      List<MessageSemantics.Identification> ids = new ArrayList<>();
      List<MessageSemantics.Work> works = new ArrayList<>();
      Set<RecordId> records = new HashSet<>();
      boolean unidentified = false;
      int end = start;
      for (; end < messages.size(); end++) {
        M message = Objects.requireNonNull(messages.get(end), "message");
        MessageSemantics.Identification id;
        try {
          id = semantics.identify(message);
        } catch (RuntimeException e) {
          if (acks.isEmpty() && end == start) {
            throw e; // as process would; nothing of this call is left unanswered
          }
          unidentified = true; // answer those before it; the caller calls again from it
          break;
        }
        if (id instanceof MessageSemantics.Target t
            && !records.add(RecordId.of(t.scope(), t.key()))) {
          break; // the same record again: it waits for this batch's outcome
        }
        ids.add(id);
        works.add(context -> handler.handle(message, context));
      }
      if (!ids.isEmpty() && !semantics.runAll(once, ids, works, acks) || unidentified) {
        return acks;
      }
      start = end;
    }
    return acks;
  }

  /** This consumer bound to a handler, for a broker consumer to call per delivery or batch. */
  public MessageProcessor<M> processor(MessageHandler<M> handler) {
    Objects.requireNonNull(handler, "handler");
    return semantics.processor(
        message -> process(message, handler), messages -> processAll(messages, handler));
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

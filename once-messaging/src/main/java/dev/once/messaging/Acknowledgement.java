package dev.once.messaging;

import dev.once.FinalFailure;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a consumer does with a message once {@link MessageIdempotency} has processed it. Broker
 * modules map each case onto their broker with {@link #accept(Visitor)}, so that a case added later
 * fails their compilation instead of being acknowledged by default; the table in {@code
 * docs/messaging.md} lists how.
 *
 * <pre>{@code
 * messages.process(delivery, handler).accept(new Acknowledgement.Visitor<Void>() {
 *   public Void ack(Acknowledgement.Ack a) { ack(); return null; }
 *   public Void redeliver(Acknowledgement.Redeliver r) { redeliverAfter(r.delay()); return null; }
 *   public Void deadLetter(Acknowledgement.DeadLetter d) { deadLetter(d.failure()); ack(); return null; }
 *   public Void reject(Acknowledgement.Reject r) { deadLetter(r.detail()); ack(); return null; }
 * });
 * }</pre>
 */
public sealed interface Acknowledgement {

  /**
   * One method per variant of {@link Acknowledgement}. It has no default methods on purpose: a new
   * variant adds a method here, and every broker's mapping stops compiling until it handles it.
   *
   * @param <R> what the visit answers
   */
  interface Visitor<R> {
    R ack(Ack ack);

    R redeliver(Redeliver redeliver);

    R deadLetter(DeadLetter deadLetter);

    R reject(Reject reject);
  }

  /** Calls the visitor's method for this variant and answers what it answers. */
  <R> R accept(Visitor<R> visitor);

  /** Why a message is acknowledged. */
  enum AckReason {
    /** The handler ran now and its outcome is recorded (or the record's fate is logged). */
    PROCESSED,
    /**
     * An earlier delivery's outcome is recorded: nothing ran. Also for a recorded final failure.
     */
    DUPLICATE,
    /** The store was down and the policy is fail-open: the handler ran without protection. */
    UNGUARDED
  }

  /** Why a message must come back later. */
  enum RedeliverReason {
    /** Another consumer holds the lease on this key right now. */
    IN_FLIGHT,
    /** The handler failed transiently; the key was released, so the redelivery runs afresh. */
    TRANSIENT_FAILURE,
    /** The store (or, in transactional mode, the database) could not be reached; nothing ran. */
    STORE_UNAVAILABLE
  }

  /** Why a message is refused without running: it can never be processed as it is. */
  enum RejectReason {
    /** The key extractor found no key. */
    KEY_MISSING,
    /** The key is not 1–255 printable ASCII characters. */
    KEY_INVALID,
    /**
     * The key was processed before with a different payload: a producer bug, never a redelivery.
     */
    KEY_REUSED
  }

  /** Acknowledge (delete) the message. */
  record Ack(AckReason reason) implements Acknowledgement {
    public Ack {
      Objects.requireNonNull(reason, "reason");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.ack(this);
    }
  }

  /**
   * Do not acknowledge: have the broker deliver the message again after {@code delay}, where the
   * broker can delay (SQS visibility, a RabbitMQ retry queue), else at once.
   *
   * @param cause the failure, if one caused this (a transient exception, the store's); else null
   */
  record Redeliver(Duration delay, RedeliverReason reason, @Nullable Throwable cause)
      implements Acknowledgement {
    public Redeliver {
      Objects.requireNonNull(delay, "delay");
      Objects.requireNonNull(reason, "reason");
      if (delay.isNegative()) {
        throw new IllegalArgumentException("delay must not be negative, was " + delay);
      }
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.redeliver(this);
    }
  }

  /**
   * The handler failed finally and the failure is recorded: acknowledge the message, after sending
   * it to the dead-letter destination if one is configured. Duplicates of it are plain {@link Ack}s
   * with {@link AckReason#DUPLICATE}, so it is dead-lettered once.
   */
  record DeadLetter(FinalFailure failure) implements Acknowledgement {
    public DeadLetter {
      Objects.requireNonNull(failure, "failure");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.deadLetter(this);
    }
  }

  /**
   * The message cannot be processed as it is and nothing was recorded: acknowledge it, after
   * sending it to the dead-letter destination if one is configured. Never redelivered, since every
   * redelivery would be refused the same way.
   *
   * @param detail why, for logs; never holds the payload
   */
  record Reject(RejectReason reason, String detail) implements Acknowledgement {
    public Reject {
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(detail, "detail");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.reject(this);
    }
  }
}

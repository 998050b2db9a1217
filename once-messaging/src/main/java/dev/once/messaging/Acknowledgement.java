package dev.once.messaging;

import dev.once.FinalFailure;
import java.time.Duration;
import java.util.Objects;

/**
 * What a consumer does with a message once {@link MessageIdempotency} has processed it. Broker
 * modules map each case onto their broker; the table in {@code docs/messaging.md} lists how.
 *
 * <pre>{@code
 * Acknowledgement a = messages.process(delivery, handler);
 * if (a instanceof Acknowledgement.Ack) ack();
 * else if (a instanceof Acknowledgement.Redeliver r) redeliverAfter(r.delay());
 * else if (a instanceof Acknowledgement.DeadLetter d) { deadLetter(d.failure()); ack(); }
 * else if (a instanceof Acknowledgement.Reject r) { deadLetter(r.detail()); ack(); }
 * }</pre>
 */
public sealed interface Acknowledgement {

  /** Why a message is acknowledged. */
  enum AckReason {
    /** The handler ran now and its outcome is recorded (or the record's fate is logged). */
    PROCESSED,
    /** An earlier delivery's outcome is recorded: nothing ran. Also for a recorded final failure. */
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
    /** The key was processed before with a different payload: a producer bug, never a redelivery. */
    KEY_REUSED
  }

  /** Acknowledge (delete) the message. */
  record Ack(AckReason reason) implements Acknowledgement {
    public Ack {
      Objects.requireNonNull(reason, "reason");
    }
  }

  /**
   * Do not acknowledge: have the broker deliver the message again after {@code delay}, where the
   * broker can delay (SQS visibility, a RabbitMQ retry queue), else at once.
   *
   * @param cause the failure, if one caused this (a transient exception, the store's); else null
   */
  record Redeliver(Duration delay, RedeliverReason reason, Throwable cause) implements Acknowledgement {
    public Redeliver {
      Objects.requireNonNull(delay, "delay");
      Objects.requireNonNull(reason, "reason");
      if (delay.isNegative()) {
        throw new IllegalArgumentException("delay must not be negative, was " + delay);
      }
    }
  }

  /**
   * The handler failed finally and the failure is recorded: acknowledge the message, after sending
   * it to the dead-letter destination if one is configured. Duplicates of it are plain
   * {@link Ack}s with {@link AckReason#DUPLICATE}, so it is dead-lettered once.
   */
  record DeadLetter(FinalFailure failure) implements Acknowledgement {
    public DeadLetter {
      Objects.requireNonNull(failure, "failure");
    }
  }

  /**
   * The message cannot be processed as it is and nothing was recorded: acknowledge it, after sending
   * it to the dead-letter destination if one is configured. Never redelivered, since every
   * redelivery would be refused the same way.
   *
   * @param detail why, for logs; never holds the payload
   */
  record Reject(RejectReason reason, String detail) implements Acknowledgement {
    public Reject {
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(detail, "detail");
    }
  }
}

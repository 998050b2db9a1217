package dev.once.messaging;

import dev.once.Admission;
import dev.once.ExecutionContext;
import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.FinalFailure;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.Lease;
import dev.once.Once;
import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import dev.once.Recording;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement.Ack;
import dev.once.messaging.Acknowledgement.AckReason;
import dev.once.messaging.Acknowledgement.DeadLetter;
import dev.once.messaging.Acknowledgement.Redeliver;
import dev.once.messaging.Acknowledgement.RedeliverReason;
import dev.once.messaging.Acknowledgement.Reject;
import dev.once.messaging.Acknowledgement.RejectReason;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The message semantics, written once for both consumers: how a message is identified, how an
 * admission and a handler's outcome become an {@link Acknowledgement}. The plain and the
 * transactional consumer differ only in the {@link Unit} around the handler.
 */
final class MessageSemantics<M> {

  private static final Logger log = LoggerFactory.getLogger(MessageSemantics.class);

  /** A handler returns nothing; its record keeps an empty result. */
  private static final byte[] NOTHING = new byte[0];

  private static final Ack PROCESSED = new Ack(AckReason.PROCESSED);
  private static final Ack DUPLICATE = new Ack(AckReason.DUPLICATE);
  private static final Ack UNGUARDED = new Ack(AckReason.UNGUARDED);

  private final MessageReader<M> reader;
  private final KeyExtractor<M> keys;
  private final boolean messageIdFallback;
  private final Function<? super M, Scope> scopes;
  private final Function<? super M, Fingerprint> fingerprints;
  private final OutcomeClassifier<Object> classifier;
  private final ExecutionPolicy policy;
  private final Redeliver inFlight;
  private final Duration retryDelay;

  MessageSemantics(MessageOptions<M, ?> o, ExecutionPolicy policy) {
    this.reader = o.reader;
    this.keys = o.keys;
    this.messageIdFallback = o.messageIdFallback;
    this.scopes = Objects.requireNonNull(o.scopes, "scopes"); // semantics() checked it
    this.fingerprints = o.fingerprints;
    this.classifier = o.classifier;
    this.policy = policy;
    this.inFlight = new Redeliver(o.inFlightRedeliveryDelay, RedeliverReason.IN_FLIGHT, null);
    this.retryDelay = o.retryDelay;
  }

  /** Which record a message belongs to, or why it has none. */
  sealed interface Identification {}

  record Target(Scope scope, IdempotencyKey key, Fingerprint fingerprint)
      implements Identification {}

  record Refused(Reject reject) implements Identification {}

  /** The work a consumer runs for a message, inside its lease. */
  @FunctionalInterface
  interface Work {
    void run(ExecutionContext context) throws Exception;
  }

  /**
   * The transaction one message runs in. Plain consumption has none ({@link #NONE}); the
   * transactional consumer's commits the handler's writes with the record.
   */
  interface Unit {
    Unit NONE = new Unit() {};

    /** Before the handler: marks the point a failed handler's writes are undone to. */
    default void begin() throws Exception {}

    /** After the handler threw: undoes its writes, keeping the claim. */
    default void undoHandler() throws Exception {}

    /**
     * Ends the unit after the outcome was written with {@code recording}: true if the outcome
     * stands and the message may be acknowledged. Without a transaction it always stands: the
     * effect happened, and acknowledging is what keeps it from happening twice.
     */
    default boolean keep(Recording recording) {
      return true;
    }

    /** Ends the unit keeping nothing. */
    default void discard() {}
  }

  Identification identify(M message) {
    String raw = keys.keyOf(message, reader);
    if (raw == null && messageIdFallback) {
      raw = reader.messageId(message).orElse(null);
    }
    if (raw == null) {
      return refuse(RejectReason.KEY_MISSING, "the message has no idempotency key");
    }
    IdempotencyKey key;
    try {
      key = IdempotencyKey.of(raw);
    } catch (InvalidIdempotencyKeyException e) {
      return refuse(RejectReason.KEY_INVALID, Objects.requireNonNull(e.getMessage(), "message"));
    }
    Scope scope = scopes.apply(message);
    if (scope == null) {
      throw new IllegalStateException(
          "the scope function returned null for a message keyed " + key);
    }
    return new Target(scope, key, fingerprints.apply(message));
  }

  private static Refused refuse(RejectReason reason, String detail) {
    log.warn("rejecting a message: {}", detail);
    return new Refused(new Reject(reason, detail));
  }

  ExecutionPolicy policy() {
    return policy;
  }

  /** A processor that runs {@code process} and reports this policy's lease. */
  MessageProcessor<M> processor(Function<M, Acknowledgement> process) {
    Optional<Duration> lease = Optional.of(policy.lease());
    return new MessageProcessor<>() {
      @Override
      public Acknowledgement process(M message) {
        return process.apply(message);
      }

      @Override
      public Optional<Duration> lease() {
        return lease;
      }
    };
  }

  /** Claims the message's record and, if this consumer wins it, runs the work in {@code unit}. */
  Acknowledgement run(Once once, Target target, Unit unit, Work work) {
    Admission admission = once.begin(target.scope(), target.key(), target.fingerprint(), policy);
    return admission.accept(
        new Admission.Visitor<>() {
          @Override
          public Acknowledgement proceed(Admission.Proceed proceed) {
            return MessageSemantics.this.proceed(target, proceed.lease(), unit, work);
          }

          @Override
          public Acknowledgement unguarded(Admission.Unguarded unguarded) {
            unit.discard();
            return MessageSemantics.this.unguarded(target, work);
          }

          @Override
          public Acknowledgement inFlight(Admission.InFlight inFlight) {
            unit.discard();
            return MessageSemantics.this.inFlight;
          }

          @Override
          public Acknowledgement fingerprintMismatch(Admission.FingerprintMismatch mismatch) {
            unit.discard();
            return refuse(
                    RejectReason.KEY_REUSED,
                    "key " + target.key() + " was processed before with a different payload")
                .reject();
          }

          @Override
          public Acknowledgement storeUnavailable(Admission.StoreUnavailable unavailable) {
            unit.discard();
            return new Redeliver(
                unavailable.retryAfter(), RedeliverReason.STORE_UNAVAILABLE, unavailable.cause());
          }

          @Override
          public Acknowledgement replay(Admission.Replay replay) {
            return duplicate();
          }

          @Override
          public Acknowledgement replayFailure(Admission.ReplayFailure replayFailure) {
            return duplicate();
          }

          @Override
          public Acknowledgement responseUnavailable(Admission.ResponseUnavailable unavailable) {
            return duplicate();
          }

          /** An earlier delivery's outcome stands, whatever it was. */
          private Acknowledgement duplicate() {
            unit.discard();
            log.debug("message {} is a duplicate; acknowledging without running", target.key());
            return DUPLICATE;
          }
        });
  }

  private Acknowledgement proceed(Target target, Lease lease, Unit unit, Work work) {
    try {
      unit.begin();
    } catch (Exception e) {
      lease.abandon();
      unit.discard();
      return new Redeliver(policy.storeRetryAfter(), RedeliverReason.STORE_UNAVAILABLE, e);
    }
    try {
      work.run(lease);
    } catch (Throwable error) {
      return failed(target, lease, unit, error);
    }
    Recording recording = lease.complete(NOTHING);
    return unit.keep(recording) ? PROCESSED : unkept(recording);
  }

  private Acknowledgement failed(Target target, Lease lease, Unit unit, Throwable error) {
    try {
      unit.undoHandler();
    } catch (Exception e) {
      error.addSuppressed(e);
      lease.abandon();
      unit.discard();
      return new Redeliver(policy.storeRetryAfter(), RedeliverReason.STORE_UNAVAILABLE, error);
    }
    Outcome outcome;
    try {
      outcome = OutcomeClassifier.outcomeOfError(classifier, error);
    } catch (RuntimeException bug) {
      // Whether the handler's effect happened before it threw is unknown: neither release (a
      // redelivery could repeat it) nor record; abandon the lease to its end and redeliver.
      error.addSuppressed(bug);
      log.error(
          "the classifier failed on an error from message {}; abandoning its lease",
          target.key(),
          bug);
      lease.abandon();
      unit.discard();
      return transientFailure(target, error);
    }
    if (outcome == Outcome.TRANSIENT) {
      lease.release();
      unit.discard();
      return transientFailure(target, error);
    }
    FinalFailure failure = asFinalFailure(error);
    Recording recording = lease.failFinal(failure);
    if (!unit.keep(recording)) {
      return unkept(recording);
    }
    log.warn(
        "message {} failed finally ({}); recorded, dead-lettering it",
        target.key(),
        failure.code());
    return new DeadLetter(failure);
  }

  /** The fail-open path: the store is down and the policy says run anyway, without a lease. */
  private Acknowledgement unguarded(Target target, Work work) {
    try {
      work.run(ExecutionContext.unguarded(target.scope(), target.key()));
      return UNGUARDED;
    } catch (Throwable error) {
      Outcome outcome;
      try {
        outcome = OutcomeClassifier.outcomeOfError(classifier, error);
      } catch (RuntimeException bug) {
        error.addSuppressed(bug);
        outcome = Outcome.TRANSIENT; // nothing was claimed, so nothing is left to finish
      }
      return outcome == Outcome.TRANSIENT
          ? transientFailure(target, error)
          : new DeadLetter(asFinalFailure(error));
    }
  }

  private Acknowledgement transientFailure(Target target, Throwable error) {
    if (error instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    if (error instanceof Error e) {
      throw e; // the key is released; a broken JVM is not the message's fault
    }
    log.debug("message {} failed transiently; redelivering: {}", target.key(), error.toString());
    return new Redeliver(retryDelay, RedeliverReason.TRANSIENT_FAILURE, error);
  }

  /** The outcome was not kept (the store failed, or the lease was taken over): nothing stands. */
  private Acknowledgement unkept(Recording recording) {
    return recording == Recording.LEASE_LOST
        ? inFlight
        : new Redeliver(policy.storeRetryAfter(), RedeliverReason.STORE_UNAVAILABLE, null);
  }

  private static FinalFailure asFinalFailure(Throwable error) {
    return error instanceof FinalFailure f
        ? f
        : new FinalFailure(error.getClass().getName(), error.getMessage());
  }

  /** Why {@code policy} may not be used by a transactional consumer; empty if it may. */
  static Optional<String> transactionalConflict(ExecutionPolicy policy) {
    if (policy.heartbeat()) {
      return Optional.of(
          "policy.heartbeat must be false in transactional mode: the record is invisible to others until commit");
    }
    if (policy.failureMode() == FailureMode.FAIL_OPEN) {
      return Optional.of(
          "policy.failureMode must be FAIL_CLOSED in transactional mode: the store is the business database");
    }
    return Optional.empty();
  }
}

package dev.once.messaging;

import dev.once.Admission;
import dev.once.Claim;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
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

  /**
   * A processor that runs {@code process} (and {@code processAll} for a batch, if given) and
   * reports this policy's lease.
   */
  MessageProcessor<M> processor(
      Function<M, Acknowledgement> process,
      @Nullable Function<List<M>, List<Acknowledgement>> processAll) {
    Optional<Duration> lease = Optional.of(policy.lease());
    return new MessageProcessor<>() {
      @Override
      public Acknowledgement process(M message) {
        return process.apply(message);
      }

      @Override
      public List<Acknowledgement> processAll(List<M> messages) {
        return processAll == null
            ? MessageProcessor.super.processAll(messages)
            : processAll.apply(messages);
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
    return admit(
        admission,
        target,
        work,
        lease -> proceed(target, lease, unit, work),
        answered -> {
          unit.discard();
          return answered;
        });
  }

  /**
   * Runs messages whose records are distinct, as {@link #run} would each without a unit: claims
   * them in one call, runs each winner's work in turn, and records each outcome without waiting for
   * it before the next work starts; the outcomes are awaited together at the end. Appends the
   * acknowledgements to {@code acks}; returns false if it stopped after a redelivery.
   *
   * <p>Why recording does not wait: a consumer processes a partition one message at a time, so a
   * round trip per outcome would pace it. Not waiting widens the window in which a crash leaves an
   * effect unrecorded only by the round trips under way (the engine gathers them into one where the
   * store batches), and the record still stands before the message is acknowledged.
   */
  boolean runAll(
      Once once, List<Identification> ids, List<Work> works, List<Acknowledgement> acks) {
    List<Claim> claims = new ArrayList<>(ids.size());
    for (Identification id : ids) {
      if (id instanceof Target t) {
        claims.add(new Claim(t.scope(), t.key(), t.fingerprint()));
      }
    }
    List<Admission> admissions = once.beginAll(claims, policy);
    Batch batch = new Batch(acks);
    int next = 0;
    List<CompletableFuture<Recording>> givenBack = new ArrayList<>();
    boolean finished = false;
    try {
      for (int i = 0; i < ids.size() && !batch.stopped; i++) {
        if (ids.get(i) instanceof Refused r) {
          acks.add(r.reject());
          continue;
        }
        Target target = (Target) ids.get(i);
        Work work = works.get(i);
        Acknowledgement ack =
            admit(
                admissions.get(next++),
                target,
                work,
                lease -> batch.run(target, lease, work),
                answered -> answered);
        if (!batch.stopped) {
          acks.add(ack);
          batch.stopped = ack instanceof Redeliver;
        }
      }
      finished = true;
    } finally {
      // Claims won for messages that did not run (the batch stopped, or an Error is on its way
      // out): nothing ran under them. Given back before the answer, so their redelivery finds
      // them free (a stolen one with its lease ended and its record kept).
      for (int i = next; i < admissions.size(); i++) {
        if (admissions.get(i) instanceof Admission.Proceed p) {
          givenBack.add(p.lease().giveBackAsync().toCompletableFuture());
        }
      }
      if (!finished) {
        givenBack.forEach(batch::join); // given back before the Error leaves, not after
      }
    }
    batch.settle();
    givenBack.forEach(batch::join);
    return !batch.stopped;
  }

  /** The outcomes of one {@link #runAll} not yet known to be recorded. */
  private final class Batch {
    /** Stands in an acknowledgement's place until its outcome is known to be recorded. */
    private final Ack recording = new Ack(AckReason.PROCESSED);

    private final List<Acknowledgement> acks;
    private final List<Integer> at = new ArrayList<>();
    private final List<CompletionStage<Recording>> outcomes = new ArrayList<>();
    boolean stopped;

    Batch(List<Acknowledgement> acks) {
      this.acks = acks;
    }

    Acknowledgement run(Target target, Lease lease, Work work) {
      try {
        work.run(lease);
      } catch (Throwable error) {
        // Rare: first make sure the outcomes before it stand. If one does not, this message must
        // not be answered (the stream goes back to that one), and its failure must not be recorded
        // either: a recorded failure is never dead-lettered again on redelivery. Abandoned, the
        // lease ends and the redelivery runs it again, as after a crash.
        settle();
        if (stopped) {
          lease.abandon();
          return recording; // not added: the batch stopped
        }
        return failed(target, lease, Unit.NONE, error);
      }
      at.add(acks.size());
      outcomes.add(lease.completeAsync(NOTHING));
      return recording;
    }

    /**
     * Waits for the outcomes under way and puts each one's acknowledgement in its place; at the
     * first that was not kept, drops the acknowledgements after it (those messages come again and
     * are answered as duplicates) and stops.
     */
    void settle() {
      for (int i = 0; i < at.size(); i++) {
        int index = at.get(i);
        Recording r = join(outcomes.get(i));
        if (index >= acks.size()) {
          continue; // dropped with an earlier outcome that was not kept
        }
        if (r == Recording.RECORDED || r == Recording.RESULT_NOT_STORED) {
          acks.set(index, PROCESSED);
        } else {
          acks.set(index, unkept(r));
          acks.subList(index + 1, acks.size()).clear();
          stopped = true;
        }
      }
      at.clear();
      outcomes.clear();
    }

    Recording join(CompletionStage<Recording> outcome) {
      try {
        return outcome.toCompletableFuture().join();
      } catch (CompletionException | CancellationException e) {
        log.warn("recording a message's outcome failed unexpectedly", e);
        return Recording.UNKNOWN;
      }
    }
  }

  private <R> R admit(
      Admission admission,
      Target target,
      Work work,
      Function<Lease, R> proceed,
      Function<Acknowledgement, R> answered) {
    return admission.accept(
        new Admission.Visitor<>() {
          @Override
          public R proceed(Admission.Proceed p) {
            return proceed.apply(p.lease());
          }

          @Override
          public R unguarded(Admission.Unguarded unguarded) {
            return answered.apply(MessageSemantics.this.unguarded(target, work));
          }

          @Override
          public R inFlight(Admission.InFlight inFlight) {
            return answered.apply(MessageSemantics.this.inFlight);
          }

          @Override
          public R fingerprintMismatch(Admission.FingerprintMismatch mismatch) {
            return answered.apply(
                refuse(
                        RejectReason.KEY_REUSED,
                        "key " + target.key() + " was processed before with a different payload")
                    .reject());
          }

          @Override
          public R storeUnavailable(Admission.StoreUnavailable unavailable) {
            return answered.apply(
                new Redeliver(
                    unavailable.retryAfter(),
                    RedeliverReason.STORE_UNAVAILABLE,
                    unavailable.cause()));
          }

          @Override
          public R replay(Admission.Replay replay) {
            return duplicate();
          }

          @Override
          public R replayFailure(Admission.ReplayFailure replayFailure) {
            return duplicate();
          }

          @Override
          public R responseUnavailable(Admission.ResponseUnavailable unavailable) {
            return duplicate();
          }

          /** An earlier delivery's outcome stands, whatever it was. */
          private R duplicate() {
            log.debug("message {} is a duplicate; acknowledging without running", target.key());
            return answered.apply(DUPLICATE);
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
    } catch (RuntimeException | Error bug) {
      // Whether the handler's effect happened before it threw is unknown: neither release (a
      // redelivery could repeat it) nor record; abandon the lease to its end and redeliver. An
      // Error from the classifier is rethrown, once the lease is abandoned.
      if (bug != error) {
        error.addSuppressed(bug);
      }
      log.error(
          "the classifier failed on an error from message {}; abandoning its lease",
          target.key(),
          bug);
      lease.abandon();
      unit.discard();
      if (bug instanceof Error e) {
        throw e;
      }
      return transientFailure(target, error);
    }
    if (outcome == Outcome.TRANSIENT) {
      lease.giveBack();
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

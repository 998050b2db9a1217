package dev.once;

import dev.once.store.RecordId;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rules that turn an {@link Admission} into an {@link ExecutionResult}: run the work under the
 * lease and record what it gave, run it unguarded, or answer without running it. Written once, as
 * {@link Step}s, for {@link Once#execute} and {@link Once#executeAsync}; the work is the one call
 * whose form differs between them.
 */
final class Runs {

  private static final Logger log = LoggerFactory.getLogger(Runs.class);
  private static final byte[] NONE = new byte[0];

  private final Events events;

  Runs(Events events) {
    this.events = events;
  }

  /**
   * What the admission gives the caller of {@link Once#execute}.
   *
   * @param work the call that runs the operation in a context: the lease, or an unguarded one
   */
  <T> Step<ExecutionResult<T>> of(
      Admission admission,
      RecordId id,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      Function<ExecutionContext, Io<T>> work) {
    return admission.accept(
        new Admission.Visitor<Step<ExecutionResult<T>>>() {
          @Override
          public Step<ExecutionResult<T>> proceed(Admission.Proceed proceed) {
            // The engine's own admissions always carry its own lease.
            HeldLease lease = (HeldLease) proceed.lease();
            return run(lease, id, codec, classifier, work.apply(lease));
          }

          @Override
          public Step<ExecutionResult<T>> unguarded(Admission.Unguarded unguarded) {
            return runUnguarded(
                id, classifier, work.apply(new UnguardedContext(id.scope(), id.key())));
          }

          @Override
          public Step<ExecutionResult<T>> replay(Admission.Replay replay) {
            return Step.done(decode(id, replay, codec));
          }

          @Override
          public Step<ExecutionResult<T>> replayFailure(Admission.ReplayFailure replayFailure) {
            return Step.done(new ExecutionResult.Failed<>(replayFailure.failure()));
          }

          @Override
          public Step<ExecutionResult<T>> inFlight(Admission.InFlight inFlight) {
            return Step.done(new ExecutionResult.InFlight<>(inFlight.retryAfter()));
          }

          @Override
          public Step<ExecutionResult<T>> fingerprintMismatch(
              Admission.FingerprintMismatch mismatch) {
            return Step.done(new ExecutionResult.FingerprintMismatch<>());
          }

          @Override
          public Step<ExecutionResult<T>> responseUnavailable(
              Admission.ResponseUnavailable unavailable) {
            return Step.done(new ExecutionResult.ResponseUnavailable<>());
          }

          @Override
          public Step<ExecutionResult<T>> storeUnavailable(Admission.StoreUnavailable unavailable) {
            return Step.done(
                new ExecutionResult.StoreUnavailable<>(
                    unavailable.retryAfter(), unavailable.cause()));
          }
        });
  }

  /**
   * Runs the work under the lease, then finishes the lease by the verdict on what it gave, then
   * answers: the value, the recorded final failure, or the transient failure passed on after the
   * release. An {@link Error} from the classifier or the codec passes on, but only once the lease
   * is finished.
   */
  private <T> Step<ExecutionResult<T>> run(
      HeldLease lease,
      RecordId id,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      Io<T> work) {
    long start = System.nanoTime();
    return Step.call(
        work,
        ran -> {
          Verdict verdict =
              ran.failed()
                  ? Verdict.ofError(id, classifier, ran.failure())
                  : Verdict.ofValue(id, codec, classifier, ran.value());
          return verdict
              .finish(lease)
              .handle(
                  finished ->
                      finished.failed()
                          ? finished.<ExecutionResult<T>>passOn()
                          : answer(id, verdict, ran, finished.value(), System.nanoTime() - start));
        });
  }

  private <T> Step<ExecutionResult<T>> answer(
      RecordId id, Verdict verdict, Tried<T> ran, Recording recording, long nanos) {
    if (!ran.failed()) {
      events.executed(id, verdict.outcome(), recording, nanos);
      return verdict.bug() != null
          ? Step.failed(verdict.bug())
          : Step.done(new ExecutionResult.Executed<>(ran.value(), verdict.outcome(), recording));
    }
    if (verdict.bug() != null) {
      return Step.failed(verdict.bug());
    }
    FinalFailure failure = verdict.failure();
    if (failure == null) {
      if (verdict.finish() == Verdict.Finish.RELEASE) {
        events.executed(id, Outcome.TRANSIENT, recording, nanos);
      }
      return passedOn(ran.failure());
    }
    events.executed(id, Outcome.FAILED_FINAL, recording, nanos);
    return Step.done(new ExecutionResult.Failed<>(failure));
  }

  /** The work's own transient failure, for its caller; an interrupt is kept on the thread. */
  private static <T> Step<T> passedOn(Throwable error) {
    if (error instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    return Step.failed(error);
  }

  /** Runs the work with no lease (fail-open): nothing is recorded or released. */
  private static <T> Step<ExecutionResult<T>> runUnguarded(
      RecordId id, OutcomeClassifier<? super T> classifier, Io<T> work) {
    return Step.call(
        work,
        ran -> {
          if (ran.failed()) {
            Throwable error = ran.failure();
            return OutcomeClassifier.outcomeOfError(classifier, error) == Outcome.TRANSIENT
                ? passedOn(error)
                : Step.done(new ExecutionResult.Failed<>(Verdict.finalFailureOf(error)));
          }
          return Step.done(
              new ExecutionResult.Executed<>(
                  ran.value(), unguardedOutcome(id, classifier, ran.value()), Recording.UNGUARDED));
        });
  }

  /**
   * The classifier's verdict on the value of an unguarded run. If the classifier throws, the work
   * still happened: it counts as completed, and the bug is logged, not thrown at a caller whose
   * operation succeeded.
   */
  private static <T> Outcome unguardedOutcome(
      RecordId id, OutcomeClassifier<? super T> classifier, T value) {
    try {
      return Objects.requireNonNull(classifier.classify(value), "the classifier returned null");
    } catch (RuntimeException e) {
      log.error(
          "the classifier failed on the result of {} (run unguarded); counting it as completed",
          id,
          e);
      return Outcome.COMPLETED;
    }
  }

  private static <T> ExecutionResult<T> decode(
      RecordId id, Admission.Replay replay, ResultCodec<T> codec) {
    try {
      return new ExecutionResult.Replayed<>(codec.decode(replay.value()), replay.outcome());
    } catch (RuntimeException e) {
      log.warn(
          "could not decode the recorded result of {}; answering 'response unavailable'", id, e);
      return new ExecutionResult.ResponseUnavailable<>();
    }
  }

  /**
   * What a run's value or exception becomes, and how its lease is finished: the one rule both APIs
   * apply.
   *
   * @param outcome what the caller is told the run was ({@link Outcome#TRANSIENT} also for {@link
   *     Finish#ABANDON}, where the error passes on as a transient one would, but no execution is
   *     reported)
   * @param bytes the encoded value, for {@link Finish#COMPLETE} and a value's {@link
   *     Finish#FAIL_FINAL}
   * @param failure the final failure an exception is recorded and answered as
   * @param bug an {@link Error} from the classifier or the codec, passed on once the lease is
   *     finished
   */
  record Verdict(
      Outcome outcome,
      Finish finish,
      byte[] bytes,
      @Nullable FinalFailure failure,
      @Nullable Error bug) {

    /** How a lease is finished. */
    enum Finish {
      COMPLETE,
      FAIL_FINAL,
      WITHOUT_RESULT,
      RELEASE,
      ABANDON
    }

    /** Classified, then recorded for replay; a transient value releases the key. */
    static <T> Verdict ofValue(
        RecordId id, ResultCodec<T> codec, OutcomeClassifier<? super T> classifier, T value) {
      Outcome outcome;
      try {
        outcome =
            Objects.requireNonNull(classifier.classify(value), "the classifier returned null");
      } catch (RuntimeException | Error e) {
        // The operation returned, so its effect happened: record it as done without a result, as
        // for a codec failure, so a retry never runs it again; the bug is logged, not rethrown,
        // because the caller's work did succeed. An Error (an AssertionError, an
        // OutOfMemoryError) is rethrown, but only once the lease is finished.
        log.error(
            "the classifier failed on the result of {}; recording it as done without a result",
            id,
            e);
        return new Verdict(Outcome.COMPLETED, Finish.WITHOUT_RESULT, NONE, null, errorOf(e));
      }
      if (outcome == Outcome.TRANSIENT) {
        return new Verdict(outcome, Finish.RELEASE, NONE, null, null);
      }
      byte[] bytes;
      try {
        bytes = Objects.requireNonNull(codec.encode(value), "the codec encoded a value as null");
      } catch (RuntimeException | Error e) {
        // The work is done; it must not run again just because its result cannot be encoded.
        log.warn(
            "could not encode the result of {}; retries will get 'response unavailable'", id, e);
        return new Verdict(outcome, Finish.WITHOUT_RESULT, NONE, null, errorOf(e));
      }
      Finish finish = outcome == Outcome.COMPLETED ? Finish.COMPLETE : Finish.FAIL_FINAL;
      return new Verdict(outcome, finish, bytes, null, null);
    }

    /**
     * A final failure to record and replay, or a transient one (the key is released and the
     * exception passes on); if the classifier itself fails, whether the operation's effect happened
     * before it threw is unknown, so the key is neither released (a retry could repeat the effect)
     * nor recorded: it is abandoned to its lease.
     */
    static Verdict ofError(RecordId id, OutcomeClassifier<?> classifier, Throwable error) {
      Outcome outcome;
      try {
        outcome = OutcomeClassifier.outcomeOfError(classifier, error);
      } catch (RuntimeException | Error bug) {
        if (bug != error) {
          error.addSuppressed(bug);
        }
        log.error("the classifier failed on an error from {}; abandoning the lease", id, bug);
        return new Verdict(Outcome.TRANSIENT, Finish.ABANDON, NONE, null, errorOf(bug));
      }
      if (outcome == Outcome.TRANSIENT) {
        return new Verdict(outcome, Finish.RELEASE, NONE, null, null);
      }
      return new Verdict(outcome, Finish.FAIL_FINAL, NONE, finalFailureOf(error), null);
    }

    static FinalFailure finalFailureOf(Throwable error) {
      return error instanceof FinalFailure f
          ? f
          : new FinalFailure(error.getClass().getName(), error.getMessage());
    }

    private static @Nullable Error errorOf(Throwable t) {
      return t instanceof Error e ? e : null;
    }

    /** Finishes the lease as the verdict says; {@link Recording#UNKNOWN} for an abandoned one. */
    Step<Recording> finish(HeldLease lease) {
      return switch (finish) {
        case COMPLETE -> lease.completing(bytes);
        case FAIL_FINAL ->
            failure == null ? lease.failingFinal(bytes) : lease.failingFinal(failure);
        case WITHOUT_RESULT -> lease.withoutResult();
        case RELEASE -> lease.givingBack();
        case ABANDON -> {
          lease.abandon();
          yield Step.done(Recording.UNKNOWN);
        }
      };
    }
  }
}

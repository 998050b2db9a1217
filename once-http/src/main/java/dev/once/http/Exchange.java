package dev.once.http;

import dev.once.IdempotencyKey;
import dev.once.Lease;
import dev.once.Once;
import dev.once.Outcome;
import dev.once.Recording;
import dev.once.Scope;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request this caller won the lease for. Finish it exactly once: {@link #record} with the
 * handler's response, {@link #recordUnavailable} if the response cannot be captured, {@link
 * #fail(Throwable)} if the handler threw, or {@link #abandon()} if the outcome is unknown.
 *
 * <p>Every one of them finishes the lease, whatever the route's classifier or the codec does: a
 * classifier that throws on a response the handler produced, or a response the codec cannot encode,
 * counts as done without a stored response (DESIGN §2, "every claim is finished"), and the
 * classifier's bug is logged at ERROR rather than thrown, because the caller still has a response
 * to send and the lease is already settled.
 */
public final class Exchange {

  private static final Logger log = LoggerFactory.getLogger(Exchange.class);

  /**
   * Never stored nor replayed besides the hop-by-hop fields: those a replay must recompute or must
   * not repeat.
   */
  static final Set<String> NEVER_REPLAYED =
      Set.of("date", "content-length", "set-cookie", "set-cookie2", "idempotent-replayed");

  /**
   * What recording a response came to.
   *
   * @param outcome the route's verdict on the response; {@link Outcome#COMPLETED} if the classifier
   *     threw
   * @param recording what the store made of it
   */
  public record Recorded(Outcome outcome, Recording recording) {
    public Recorded {
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(recording, "recording");
    }
  }

  private final Once once;
  private final Lease lease;
  private final RoutePolicy policy;

  /** When the request was admitted, by {@link System#nanoTime()}: its execution's start. */
  private final long admittedAt;

  /**
   * Whether the claim lives in the caller's uncommitted transaction, which the caller rolls back on
   * every transient outcome: then that rollback is the release, and no store call makes it.
   */
  private final boolean releasedByRollback;

  Exchange(Once once, Lease lease, RoutePolicy policy) {
    this(once, lease, policy, false, System.nanoTime());
  }

  private Exchange(
      Once once, Lease lease, RoutePolicy policy, boolean releasedByRollback, long admittedAt) {
    this.once = once;
    this.lease = lease;
    this.policy = policy;
    this.releasedByRollback = releasedByRollback;
    this.admittedAt = admittedAt;
  }

  /**
   * This exchange, for a caller whose claim was written in its own transaction (once-store-jdbc's
   * transactional mode) and which rolls that transaction back whenever the outcome is transient or
   * the handler throws: releasing the key is then the rollback itself. The lease is finished
   * without a store call, and {@link Recording#RELEASED} is reported, because a claim that is never
   * committed is never seen by anyone.
   *
   * <p>Writing the release inside the transaction instead would be at best redundant and at worst
   * impossible: after a failed statement PostgreSQL refuses every further statement of the
   * transaction, so the release would fail, be retried in vain, and the record be reported as left
   * in progress although the rollback removes it (DESIGN §2: a rollback proves the effect did not
   * happen).
   */
  public Exchange releasedByRollback() {
    return releasedByRollback ? this : new Exchange(once, lease, policy, true, admittedAt);
  }

  public IdempotencyKey key() {
    return lease.key();
  }

  public Scope scope() {
    return lease.scope();
  }

  /** The lease's fencing token; forward it to systems that can reject stale writers. */
  public long token() {
    return lease.token();
  }

  /**
   * Classifies the handler's response and records it: completed and final responses are stored
   * (without hop-by-hop and deny-listed headers) and replayed; transient ones release the key. A
   * response whose body is over the route's {@code maxResultBytes}, or that cannot be encoded,
   * still counts as done.
   */
  public Recorded record(StoredResponse response) {
    return deciding(() -> recordingOf(response)).run(this);
  }

  /**
   * {@link #record}, without a thread waiting for the store where its client allows (see {@link
   * Lease#completeAsync}).
   */
  public CompletionStage<Recorded> recordAsync(StoredResponse response) {
    return deciding(() -> recordingOf(response)).runAsync(this);
  }

  /**
   * The handler finished but its response cannot be stored (streamed): retries get 409, never a
   * re-run.
   */
  public Recording recordUnavailable() {
    return lease.completeWithoutResult();
  }

  /**
   * The handler finished with this status but its response was streamed (or outgrew the cap) and
   * cannot be stored: a transient status still releases the key, any other counts as done, so
   * retries get 409 and never a re-run.
   */
  public Recorded recordUnavailable(int status) {
    return deciding(() -> unavailableRecordingOf(status)).run(this);
  }

  /** {@link #recordUnavailable(int)}, asynchronously, as {@link #recordAsync}. */
  public CompletionStage<Recorded> recordUnavailableAsync(int status) {
    return deciding(() -> unavailableRecordingOf(status)).runAsync(this);
  }

  /** {@link #recordUnavailable()}, asynchronously, as {@link #recordAsync}. */
  public CompletionStage<Recording> recordUnavailableAsync() {
    return lease.completeWithoutResultAsync();
  }

  /** {@link #fail()}, asynchronously, as {@link #recordAsync}. */
  public CompletionStage<Recording> failAsync() {
    return releaseAsync();
  }

  /**
   * How recording {@code response} finishes the lease: the classifier's verdict and what it stores.
   */
  private Finish recordingOf(StoredResponse response) {
    Optional<Outcome> verdict = classify(response);
    if (verdict.isEmpty()) {
      return Finish.DONE;
    }
    Outcome outcome = verdict.get();
    if (outcome == Outcome.TRANSIENT) {
      return new Finish(outcome, Finish.Write.RELEASE, Finish.NOTHING, null);
    }
    if (response.body().length > policy.execution().maxResultBytes()) {
      // The cap counts the body; the headers have room of their own (Route.HEADER_ALLOWANCE).
      return new Finish(outcome, Finish.Write.WITHOUT_RESULT, Finish.NOTHING, null);
    }
    StoredResponse kept =
        new StoredResponse(response.status(), replayable(response.headers()), response.body());
    byte[] encoded;
    try {
      encoded = StoredResponse.CODEC.encode(kept);
    } catch (RuntimeException e) {
      // The effect happened; a response we cannot store must not make it happen twice.
      log.warn(
          "could not encode the response of key {}; retries will get 'response unavailable'",
          lease.key(),
          e);
      return new Finish(outcome, Finish.Write.WITHOUT_RESULT, Finish.NOTHING, null);
    }
    return new Finish(
        outcome,
        outcome == Outcome.COMPLETED ? Finish.Write.COMPLETE : Finish.Write.FAIL_FINAL,
        encoded,
        null);
  }

  private Finish unavailableRecordingOf(int status) {
    if (!StoredResponse.isStatus(status)) {
      // Nothing a classifier can judge, but the handler finished: its effect happened.
      return Finish.DONE;
    }
    Optional<Outcome> verdict = classify(new StoredResponse(status, Headers.EMPTY, new byte[0]));
    if (verdict.isEmpty()) {
      return Finish.DONE;
    }
    Outcome outcome = verdict.get();
    return new Finish(
        outcome,
        outcome == Outcome.TRANSIENT ? Finish.Write.RELEASE : Finish.Write.WITHOUT_RESULT,
        Finish.NOTHING,
        null);
  }

  /**
   * One way to finish the lease, decided before any store call, so the blocking and the
   * asynchronous calls finish alike.
   *
   * @param outcome the route's verdict, reported with the recording
   * @param write the lease call that finishes it
   * @param encoded the stored response, for {@link Write#COMPLETE} and {@link Write#FAIL_FINAL};
   *     else {@link #NOTHING}
   * @param thrown the classifier's error, rethrown once the lease is finished; else null
   */
  private record Finish(Outcome outcome, Write write, byte[] encoded, @Nullable Error thrown) {

    /** What {@code encoded} holds for the writes that store no response. */
    static final byte[] NOTHING = new byte[0];

    /**
     * The handler produced a response, so its effect happened: never released, whatever went wrong
     * after.
     */
    static final Finish DONE =
        new Finish(Outcome.COMPLETED, Write.WITHOUT_RESULT, Finish.NOTHING, null);

    enum Write {
      RELEASE,
      WITHOUT_RESULT,
      COMPLETE,
      FAIL_FINAL
    }

    Recorded run(Exchange exchange) {
      Lease lease = exchange.lease;
      Recording recording =
          switch (write) {
            case RELEASE -> exchange.release();
            case WITHOUT_RESULT -> lease.completeWithoutResult();
            case COMPLETE -> lease.complete(encoded);
            case FAIL_FINAL -> lease.failFinal(encoded);
          };
      exchange.reportExecuted(outcome, recording);
      return recorded(recording);
    }

    CompletionStage<Recorded> runAsync(Exchange exchange) {
      Lease lease = exchange.lease;
      CompletionStage<Recording> recording =
          switch (write) {
            case RELEASE -> exchange.releaseAsync();
            case WITHOUT_RESULT -> lease.completeWithoutResultAsync();
            case COMPLETE -> lease.completeAsync(encoded);
            case FAIL_FINAL -> lease.failFinalAsync(encoded);
          };
      return recording.thenApply(
          r -> {
            exchange.reportExecuted(outcome, r);
            return recorded(r);
          });
    }

    private Recorded recorded(Recording recording) {
      if (thrown != null) {
        throw thrown;
      }
      return new Recorded(outcome, recording);
    }
  }

  /**
   * The handler threw before any byte of its response went out. A transient failure (by the route's
   * classifier: any exception but a {@link dev.once.FinalFailure}) releases the key so a retry runs
   * afresh; any other counts as done, with no response to replay, because the handler itself said
   * its effect is final.
   */
  public Recording fail(Throwable error) {
    return deciding(() -> failingOf(error)).run(this).recording();
  }

  /** {@link #fail(Throwable)}, asynchronously, as {@link #recordAsync}. */
  public CompletionStage<Recording> failAsync(Throwable error) {
    return deciding(() -> failingOf(error)).runAsync(this).thenApply(Recorded::recording);
  }

  /**
   * How a handler's error finishes the lease: released if the route's classifier calls it
   * transient, else done. A broken classifier (no verdict) is no proof that the effect did not
   * happen: never release on it.
   */
  private Finish failingOf(Throwable error) {
    Optional<Outcome> verdict =
        judge(() -> policy.classifier().classifyError(error), "a " + error.getClass().getName());
    return verdict.equals(Optional.of(Outcome.TRANSIENT))
        ? new Finish(Outcome.TRANSIENT, Finish.Write.RELEASE, Finish.NOTHING, null)
        : Finish.DONE;
  }

  /**
   * The finish {@code decide} arrives at; if the classifier threw an {@link Error}, the lease still
   * counts as done (the handler ran), and the error is rethrown once it is recorded, by the
   * blocking or the asynchronous call that records it: never a blocking call on an event loop.
   */
  private static Finish deciding(Supplier<Finish> decide) {
    try {
      return decide.get();
    } catch (BrokenClassifier broken) {
      return new Finish(
          Outcome.COMPLETED, Finish.Write.WITHOUT_RESULT, Finish.NOTHING, broken.error);
    }
  }

  /** Carries a classifier's {@link Error} out of {@link #judge} to {@link #deciding}. */
  private static final class BrokenClassifier extends RuntimeException {
    private static final long serialVersionUID = 1L;

    @SuppressWarnings("serial") // never serialised: it never leaves this class
    private final Error error;

    BrokenClassifier(Error error) {
      super(error.getMessage(), error, false, false);
      this.error = error;
    }
  }

  /**
   * The handler ran and this is how it ended: the engine's listeners (metrics, the request's span)
   * count it as they count an {@link Once#execute} call. {@link #abandon()} reports an unknown
   * recording; {@link #fail()}, which says nothing ran, reports nothing.
   */
  private void reportExecuted(Outcome outcome, Recording recording) {
    once.reportExecuted(lease, outcome, recording, System.nanoTime() - admittedAt);
  }

  /**
   * The handler threw before its effect, as far as the caller knows: the key is given back, so a
   * retry runs afresh ({@link Lease#giveBack}).
   */
  public Recording fail() {
    return release();
  }

  /**
   * Gives the key back ({@link Lease#giveBack}: released, or abandoned where the lease was stolen
   * or checkpointed): by a store call, or by the caller's rollback (see {@link
   * #releasedByRollback}).
   */
  private Recording release() {
    if (releasedByRollback) {
      lease.abandon(); // finishes the lease here; the caller's rollback undoes the claim
      return Recording.RELEASED;
    }
    return lease.giveBack();
  }

  private CompletionStage<Recording> releaseAsync() {
    return releasedByRollback
        ? CompletableFuture.completedFuture(release())
        : lease.giveBackAsync();
  }

  /**
   * The outcome is unknown (the request may have reached an upstream): the key stays in progress
   * until its lease ends, so a retry cannot duplicate an effect that did happen.
   */
  public void abandon() {
    lease.abandon();
    reportExecuted(Outcome.TRANSIENT, Recording.UNKNOWN);
  }

  /**
   * The classifier's verdict on a response; empty if it threw (the caller then finishes as {@link
   * Finish#DONE}).
   */
  private Optional<Outcome> classify(StoredResponse response) {
    return judge(
        () -> policy.classifier().classify(response), "a " + response.status() + " response");
  }

  /**
   * Asks the classifier, which is the application's code: if it throws (or answers null), the bug
   * is logged and there is no verdict. An {@link Error} settles the lease as done before it
   * propagates (see {@link #deciding}).
   */
  private Optional<Outcome> judge(Supplier<Outcome> verdict, String what) {
    try {
      return Optional.of(Objects.requireNonNull(verdict.get(), "the classifier answered null"));
    } catch (RuntimeException e) {
      log.error(
          "the outcome classifier threw on {} for key {}; it counts as done and retries get"
              + " 'response unavailable'. Fix the classifier.",
          what,
          lease.key(),
          e);
      return Optional.empty();
    } catch (Error e) {
      throw new BrokenClassifier(e);
    }
  }

  private Headers replayable(Headers headers) {
    return headers
        .endToEnd()
        .without(
            name -> NEVER_REPLAYED.contains(name) || policy.replayHeaderDenylist().contains(name));
  }
}

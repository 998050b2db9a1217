package dev.once;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Objects;

/**
 * What {@link Once#execute} did. Take it apart with {@link #accept(Visitor)}, which the compiler
 * checks for every variant on Java 17 (on Java 21 a pattern {@code switch} over the sealed type
 * does the same):
 *
 * <pre>{@code
 * Response response = once.execute(scope, key, fingerprint, codec, op).accept(new ExecutionResult.Visitor<>() {
 *   public Response executed(ExecutionResult.Executed<Receipt> e) { return respond(201, e.value()); }
 *   public Response replayed(ExecutionResult.Replayed<Receipt> r) { return respond(201, r.value()); }
 *   public Response failed(ExecutionResult.Failed<Receipt> f) { return respond(402, f.failure().code()); }
 *   public Response inFlight(ExecutionResult.InFlight<Receipt> i) { return respond(409, i.retryAfter()); }
 *   public Response fingerprintMismatch(ExecutionResult.FingerprintMismatch<Receipt> m) { return respond(422); }
 *   public Response responseUnavailable(ExecutionResult.ResponseUnavailable<Receipt> u) { return respond(409); }
 *   public Response storeUnavailable(ExecutionResult.StoreUnavailable<Receipt> s) { return respond(503, s.retryAfter()); }
 * });
 * }</pre>
 *
 * <p>Transient failures are not results: the key is released and the operation's exception
 * propagates (checked ones wrapped in {@link OperationFailedException}).
 *
 * @param <T> the operation's result type
 */
public sealed interface ExecutionResult<T> {

  /**
   * One method per variant of {@link ExecutionResult}. It has no default methods on purpose: a new
   * variant adds a method here, and every visitor stops compiling until it handles that variant.
   *
   * @param <T> the operation's result type
   * @param <R> what the visit answers
   */
  interface Visitor<T, R> {
    R executed(Executed<T> executed);

    R replayed(Replayed<T> replayed);

    R failed(Failed<T> failed);

    R inFlight(InFlight<T> inFlight);

    R fingerprintMismatch(FingerprintMismatch<T> fingerprintMismatch);

    R responseUnavailable(ResponseUnavailable<T> responseUnavailable);

    R storeUnavailable(StoreUnavailable<T> storeUnavailable);
  }

  /** Calls the visitor's method for this variant and answers what it answers. */
  <R> R accept(Visitor<T, R> visitor);

  /**
   * The operation ran in this call.
   *
   * @param value what it returned
   * @param outcome how the classifier judged it
   * @param recording what became of the outcome in the store
   */
  record Executed<T>(T value, Outcome outcome, Recording recording) implements ExecutionResult<T> {
    public Executed {
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(recording, "recording");
    }

    @Override
    public <R> R accept(Visitor<T, R> visitor) {
      return visitor.executed(this);
    }
  }

  /**
   * An earlier execution's recorded result, decoded.
   *
   * @param value the recorded value
   * @param outcome {@link Outcome#COMPLETED} or {@link Outcome#FAILED_FINAL}
   */
  record Replayed<T>(T value, Outcome outcome) implements ExecutionResult<T> {
    public Replayed {
      Objects.requireNonNull(outcome, "outcome");
    }

    @Override
    public <R> R accept(Visitor<T, R> visitor) {
      return visitor.replayed(this);
    }
  }

  /**
   * The operation failed finally by throwing: now ({@code failure.replayed() == false}) or in an
   * earlier execution whose failure was recorded.
   */
  record Failed<T>(FinalFailure failure) implements ExecutionResult<T> {
    public Failed {
      Objects.requireNonNull(failure, "failure");
    }

    @Override
    public <R> R accept(Visitor<T, R> visitor) {
      return visitor.failed(this);
    }
  }

  /**
   * Another execution holds the lease; try again after {@code retryAfter} (the lease's remaining
   * time by the store's clock, at least one second).
   */
  record InFlight<T>(Duration retryAfter) implements ExecutionResult<T> {
    public InFlight {
      Objects.requireNonNull(retryAfter, "retryAfter");
    }

    @Override
    public <R> R accept(Visitor<T, R> visitor) {
      return visitor.inFlight(this);
    }
  }

  /** The key was used before with a different request. The earlier result is never revealed. */
  record FingerprintMismatch<T>() implements ExecutionResult<T> {
    @Override
    public <R> R accept(Visitor<T, R> visitor) {
      return visitor.fingerprintMismatch(this);
    }
  }

  /** The operation ran before and counts as done, but its result was not stored. */
  record ResponseUnavailable<T>() implements ExecutionResult<T> {
    @Override
    public <R> R accept(Visitor<T, R> visitor) {
      return visitor.responseUnavailable(this);
    }
  }

  /**
   * The store could not be reached and the policy is fail-closed: nothing ran, try again after
   * {@code retryAfter}.
   */
  record StoreUnavailable<T>(Duration retryAfter, StoreUnavailableException cause)
      implements ExecutionResult<T> {
    public StoreUnavailable {
      Objects.requireNonNull(retryAfter, "retryAfter");
      Objects.requireNonNull(cause, "cause");
    }

    @Override
    public <R> R accept(Visitor<T, R> visitor) {
      return visitor.storeUnavailable(this);
    }
  }
}

package dev.once;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Objects;

/**
 * What {@link Once#execute} did. Switch over it:
 *
 * <pre>{@code
 * switch (once.execute(scope, key, fingerprint, codec, op)) {
 *   case ExecutionResult.Executed<Receipt> e -> respond(201, e.value());
 *   case ExecutionResult.Replayed<Receipt> r -> respond(201, r.value());
 *   case ExecutionResult.Failed<Receipt> f -> respond(402, f.failure().code());
 *   case ExecutionResult.InFlight<Receipt> i -> respond(409, i.retryAfter());
 *   case ExecutionResult.FingerprintMismatch<Receipt> m -> respond(422);
 *   case ExecutionResult.ResponseUnavailable<Receipt> u -> respond(409);
 *   case ExecutionResult.StoreUnavailable<Receipt> s -> respond(503, s.retryAfter());
 * }
 * }</pre>
 *
 * <p>Transient failures are not results: the key is released and the operation's exception
 * propagates (checked ones wrapped in {@link OperationFailedException}).
 *
 * @param <T> the operation's result type
 */
public sealed interface ExecutionResult<T> {

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
  }

  /**
   * The operation failed finally by throwing: now ({@code failure.replayed() == false}) or in an
   * earlier execution whose failure was recorded.
   */
  record Failed<T>(FinalFailure failure) implements ExecutionResult<T> {
    public Failed {
      Objects.requireNonNull(failure, "failure");
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
  }

  /** The key was used before with a different request. The earlier result is never revealed. */
  record FingerprintMismatch<T>() implements ExecutionResult<T> {}

  /** The operation ran before and counts as done, but its result was not stored. */
  record ResponseUnavailable<T>() implements ExecutionResult<T> {}

  /**
   * The store could not be reached and the policy is fail-closed: nothing ran, try again after
   * {@code retryAfter}.
   */
  record StoreUnavailable<T>(Duration retryAfter, StoreUnavailableException cause) implements ExecutionResult<T> {
    public StoreUnavailable {
      Objects.requireNonNull(retryAfter, "retryAfter");
      Objects.requireNonNull(cause, "cause");
    }
  }
}

package dev.once;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Objects;

/**
 * The first half of an execution, for callers that run the work themselves (asynchronously, or in
 * another process, as the gateway does): {@link Once#begin} answers whether to proceed, replay or
 * refuse. On {@link Proceed}, finish the returned {@link Lease} exactly once.
 *
 * <p>Take an admission apart with {@link #accept(Visitor)}: the compiler then makes every consumer
 * answer every variant, so a variant added later cannot fall into a default branch that runs the
 * work without protection.
 */
public sealed interface Admission {

  /**
   * One method per variant of {@link Admission}. It has no default methods on purpose: a new
   * variant adds a method here, and every visitor stops compiling until it decides what that
   * variant means.
   *
   * @param <R> what the visit answers
   */
  interface Visitor<R> {
    R proceed(Proceed proceed);

    R replay(Replay replay);

    R replayFailure(ReplayFailure replayFailure);

    R inFlight(InFlight inFlight);

    R fingerprintMismatch(FingerprintMismatch fingerprintMismatch);

    R responseUnavailable(ResponseUnavailable responseUnavailable);

    R storeUnavailable(StoreUnavailable storeUnavailable);

    R unguarded(Unguarded unguarded);
  }

  /** Calls the visitor's method for this variant and answers what it answers. */
  <R> R accept(Visitor<R> visitor);

  /** This caller holds the lease: do the work, then finish the lease. */
  record Proceed(Lease lease) implements Admission {
    public Proceed {
      Objects.requireNonNull(lease, "lease");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.proceed(this);
    }
  }

  /**
   * A recorded value to replay.
   *
   * @param outcome {@link Outcome#COMPLETED} or {@link Outcome#FAILED_FINAL}
   * @param value the bytes given to {@link Lease#complete} or {@link Lease#failFinal(byte[])}
   */
  record Replay(Outcome outcome, byte[] value) implements Admission {
    public Replay {
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(value, "value");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.replay(this);
    }
  }

  /** A recorded {@link FinalFailure} to replay. */
  record ReplayFailure(FinalFailure failure) implements Admission {
    public ReplayFailure {
      Objects.requireNonNull(failure, "failure");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.replayFailure(this);
    }
  }

  /** Another execution holds the lease; retry after {@code retryAfter}. */
  record InFlight(Duration retryAfter) implements Admission {
    public InFlight {
      Objects.requireNonNull(retryAfter, "retryAfter");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.inFlight(this);
    }
  }

  /** The key was used with a different request. */
  record FingerprintMismatch() implements Admission {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.fingerprintMismatch(this);
    }
  }

  /** The operation ran before and counts as done, but its result was not stored. */
  record ResponseUnavailable() implements Admission {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.responseUnavailable(this);
    }
  }

  /** The store is unavailable and the policy is fail-closed. */
  record StoreUnavailable(Duration retryAfter, StoreUnavailableException cause)
      implements Admission {
    public StoreUnavailable {
      Objects.requireNonNull(retryAfter, "retryAfter");
      Objects.requireNonNull(cause, "cause");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.storeUnavailable(this);
    }
  }

  /** The store is unavailable and the policy is fail-open: do the work without protection. */
  record Unguarded(StoreUnavailableException cause) implements Admission {
    public Unguarded {
      Objects.requireNonNull(cause, "cause");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.unguarded(this);
    }
  }
}

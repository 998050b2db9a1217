package dev.once;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Objects;

/**
 * The first half of an execution, for callers that run the work themselves (asynchronously, or in
 * another process, as the gateway does): {@link Once#begin} answers whether to proceed, replay or
 * refuse. On {@link Proceed}, finish the returned {@link Lease} exactly once.
 */
public sealed interface Admission {

  /** This caller holds the lease: do the work, then finish the lease. */
  record Proceed(Lease lease) implements Admission {
    public Proceed {
      Objects.requireNonNull(lease, "lease");
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
  }

  /** A recorded {@link FinalFailure} to replay. */
  record ReplayFailure(FinalFailure failure) implements Admission {
    public ReplayFailure {
      Objects.requireNonNull(failure, "failure");
    }
  }

  /** Another execution holds the lease; retry after {@code retryAfter}. */
  record InFlight(Duration retryAfter) implements Admission {
    public InFlight {
      Objects.requireNonNull(retryAfter, "retryAfter");
    }
  }

  /** The key was used with a different request. */
  record FingerprintMismatch() implements Admission {}

  /** The operation ran before and counts as done, but its result was not stored. */
  record ResponseUnavailable() implements Admission {}

  /** The store is unavailable and the policy is fail-closed. */
  record StoreUnavailable(Duration retryAfter, StoreUnavailableException cause) implements Admission {
    public StoreUnavailable {
      Objects.requireNonNull(retryAfter, "retryAfter");
      Objects.requireNonNull(cause, "cause");
    }
  }

  /** The store is unavailable and the policy is fail-open: do the work without protection. */
  record Unguarded(StoreUnavailableException cause) implements Admission {
    public Unguarded {
      Objects.requireNonNull(cause, "cause");
    }
  }
}

package dev.once;

import java.time.Duration;

/** What a duplicate does while the first request for its key is still executing. */
public sealed interface InFlightPolicy {

  /** Answer at once with {@link ExecutionResult.InFlight} and a retry hint. The default. */
  static InFlightPolicy reject() {
    return Reject.INSTANCE;
  }

  /**
   * Hold the duplicate until the first finishes, then replay its result; give up with {@link
   * ExecutionResult.InFlight} after {@code maxWait}.
   */
  static InFlightPolicy waitUpTo(Duration maxWait) {
    return new Wait(maxWait);
  }

  /** See {@link #reject()}. */
  enum Reject implements InFlightPolicy {
    INSTANCE
  }

  /**
   * See {@link #waitUpTo(Duration)}.
   *
   * @param maxWait the longest a duplicate is held, positive and at most one hour
   */
  record Wait(Duration maxWait) implements InFlightPolicy {
    public Wait {
      if (maxWait == null
          || maxWait.isNegative()
          || maxWait.isZero()
          || maxWait.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException(
            "maxWait must be positive and at most 1 hour, was " + maxWait);
      }
    }
  }
}

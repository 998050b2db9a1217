package dev.once;

import dev.once.internal.Arguments;
import java.time.Duration;
import java.util.Objects;

/**
 * How the engine treats one kind of operation: lease and record lifetimes, duplicates in flight,
 * store failures and the result size cap. Immutable; build with {@link #builder()} or derive with
 * {@link #toBuilder()}. Every option is validated when set.
 *
 * @param lease how long a lease lasts before another worker may steal it (default 30 s)
 * @param ttl how long a finished record is kept and replayed (default 24 h)
 * @param inFlight what a duplicate does while the first executes (default {@link
 *     InFlightPolicy#reject()})
 * @param failureMode what happens when the store is unavailable (default {@link
 *     FailureMode#FAIL_CLOSED})
 * @param maxResultBytes the largest encoded result stored; larger ones are not stored and retries
 *     get {@link ExecutionResult.ResponseUnavailable} (default 4 MiB)
 * @param heartbeat whether the lease is extended automatically while the operation runs (default
 *     true; turn it off in transactional mode, where the record is invisible to others until
 *     commit)
 * @param storeRetryAfter the retry hint given when the store is unavailable (default 1 s)
 */
public record ExecutionPolicy(
    Duration lease,
    Duration ttl,
    InFlightPolicy inFlight,
    FailureMode failureMode,
    int maxResultBytes,
    boolean heartbeat,
    Duration storeRetryAfter) {

  /** The defaults listed on each component. */
  public static final ExecutionPolicy DEFAULTS = builder().build();

  public ExecutionPolicy {
    Arguments.between("lease", lease, Duration.ofMillis(10), Duration.ofDays(1));
    Arguments.between("ttl", ttl, Duration.ofSeconds(1), Duration.ofDays(3650));
    Objects.requireNonNull(inFlight, "inFlight");
    Objects.requireNonNull(failureMode, "failureMode");
    if (maxResultBytes < 0) {
      throw new IllegalArgumentException(
          "maxResultBytes must not be negative, was " + maxResultBytes);
    }
    Arguments.between(
        "storeRetryAfter", storeRetryAfter, Duration.ofSeconds(1), Duration.ofHours(1));
    if (ttl.compareTo(lease) < 0) {
      throw new IllegalStateException(
          "ttl (" + ttl + ") must not be shorter than lease (" + lease + ")");
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.lease = lease;
    b.ttl = ttl;
    b.inFlight = inFlight;
    b.failureMode = failureMode;
    b.maxResultBytes = maxResultBytes;
    b.heartbeat = heartbeat;
    b.storeRetryAfter = storeRetryAfter;
    return b;
  }

  /**
   * Builds an {@link ExecutionPolicy}; each setter validates its value, {@link #build()} the
   * combination.
   */
  public static final class Builder {
    private Duration lease = Duration.ofSeconds(30);
    private Duration ttl = Duration.ofHours(24);
    private InFlightPolicy inFlight = InFlightPolicy.reject();
    private FailureMode failureMode = FailureMode.FAIL_CLOSED;
    private int maxResultBytes = 4 << 20;
    private boolean heartbeat = true;
    private Duration storeRetryAfter = Duration.ofSeconds(1);

    private Builder() {}

    public Builder lease(Duration lease) {
      Arguments.between("lease", lease, Duration.ofMillis(10), Duration.ofDays(1));
      this.lease = lease;
      return this;
    }

    public Builder ttl(Duration ttl) {
      Arguments.between("ttl", ttl, Duration.ofSeconds(1), Duration.ofDays(3650));
      this.ttl = ttl;
      return this;
    }

    public Builder inFlight(InFlightPolicy inFlight) {
      this.inFlight = Objects.requireNonNull(inFlight, "inFlight");
      return this;
    }

    public Builder failureMode(FailureMode failureMode) {
      this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
      return this;
    }

    public Builder maxResultBytes(int maxResultBytes) {
      if (maxResultBytes < 0) {
        throw new IllegalArgumentException(
            "maxResultBytes must not be negative, was " + maxResultBytes);
      }
      this.maxResultBytes = maxResultBytes;
      return this;
    }

    public Builder heartbeat(boolean heartbeat) {
      this.heartbeat = heartbeat;
      return this;
    }

    public Builder storeRetryAfter(Duration storeRetryAfter) {
      Arguments.between(
          "storeRetryAfter", storeRetryAfter, Duration.ofSeconds(1), Duration.ofHours(1));
      this.storeRetryAfter = storeRetryAfter;
      return this;
    }

    /**
     * @throws IllegalStateException if ttl is shorter than the lease
     */
    public ExecutionPolicy build() {
      return new ExecutionPolicy(
          lease, ttl, inFlight, failureMode, maxResultBytes, heartbeat, storeRetryAfter);
    }
  }
}

package dev.once.store;

import dev.once.Fingerprint;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What {@link InMemoryStore} keeps for one (scope, key): immutable, so every transition installs a
 * new value with one {@code ConcurrentHashMap.compute} and readers never see half a change.
 */
record StoredRecord(
    RecordState state,
    Fingerprint fingerprint,
    long token,
    Instant leaseUntil,
    Instant expiresAt,
    byte @Nullable [] recoveryPoint,
    byte @Nullable [] result,
    Instant createdAt) {

  /** Whether the record has expired at {@code now}; an expired record behaves as absent. */
  boolean isExpiredAt(Instant now) {
    return !now.isBefore(expiresAt);
  }

  /** Whether the caller holding {@code token} may write: live, in progress, and nobody stole it. */
  boolean isHeldAt(Instant now, long token) {
    return state == RecordState.IN_PROGRESS && this.token == token && !isExpiredAt(now);
  }

  /**
   * Whether a claim with {@code fingerprint} may take this in-progress record over at {@code now}.
   */
  boolean isStealableAt(Instant now, Fingerprint fingerprint) {
    return state == RecordState.IN_PROGRESS
        && !now.isBefore(leaseUntil)
        && !isExpiredAt(now)
        && this.fingerprint.equals(fingerprint);
  }

  /**
   * The lease extended to {@code leaseUntil}, but never shortened: a clock that stepped back must
   * not pull in the end an earlier extension promised the holder.
   */
  StoredRecord withLease(Instant leaseUntil, byte @Nullable [] recoveryPoint) {
    Instant until = later(this.leaseUntil, leaseUntil);
    return new StoredRecord(
        state,
        fingerprint,
        token,
        until,
        later(expiresAt, until),
        recoveryPoint,
        result,
        createdAt);
  }

  /** The lease ended at {@code now} by its holder; the rest of the record stays as it is. */
  StoredRecord withLeaseEndedAt(Instant now) {
    return new StoredRecord(
        state, fingerprint, token, now, expiresAt, recoveryPoint, result, createdAt);
  }

  StoredRecord terminal(RecordState state, byte[] result, Instant now, Instant expiresAt) {
    // The lease ends with the outcome; the recovery point is no use to anyone any more.
    return new StoredRecord(state, fingerprint, token, now, expiresAt, null, result, createdAt);
  }

  IdempotencyRecord toRecord(RecordId id, Instant observedAt) {
    return new IdempotencyRecord(
        id,
        state,
        fingerprint,
        token,
        leaseUntil,
        expiresAt,
        recoveryPoint,
        result,
        observedAt,
        createdAt);
  }

  static Instant later(Instant a, Instant b) {
    return a.isAfter(b) ? a : b;
  }
}

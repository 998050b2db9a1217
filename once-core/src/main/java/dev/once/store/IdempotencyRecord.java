package dev.once.store;

import dev.once.Fingerprint;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one stored record, as a store returned it.
 *
 * <p>Byte arrays are handed over, not copied: neither the store nor the caller may change them
 * after construction.
 *
 * @param id the (scope, key) the record is unique on
 * @param state its state
 * @param fingerprint the fingerprint of the request that created it
 * @param token the fencing token of the current (or last) lease
 * @param leaseUntil when the current lease ends (meaningful while {@link RecordState#IN_PROGRESS})
 * @param expiresAt when the record expires and becomes absent
 * @param recoveryPoint the last checkpoint a lease holder saved, or {@code null}
 * @param result the stored result (terminal states), or {@code null} while in progress
 * @param observedAt the store's clock when the snapshot was read, so callers can compute remaining
 *     lease time without trusting their own clock
 * @param createdAt when the record's first lease was granted, by the store's clock: a steal keeps
 *     it (the work has been running since then), a fresh claim of an absent or expired key sets it
 *     anew; {@code null} where the store does not know it (a record written by a version that did
 *     not record it)
 */
public record IdempotencyRecord(
    RecordId id,
    RecordState state,
    Fingerprint fingerprint,
    long token,
    Instant leaseUntil,
    Instant expiresAt,
    byte @Nullable [] recoveryPoint,
    byte @Nullable [] result,
    Instant observedAt,
    @Nullable Instant createdAt) {

  // Not a compact constructor: JDK 17's javac leaves the @Nullable of an array component off
  // a compact constructor's parameter in the class file, and NullAway in other modules would
  // then reject null.
  public IdempotencyRecord(
      RecordId id,
      RecordState state,
      Fingerprint fingerprint,
      long token,
      Instant leaseUntil,
      Instant expiresAt,
      byte @Nullable [] recoveryPoint,
      byte @Nullable [] result,
      Instant observedAt,
      @Nullable Instant createdAt) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(leaseUntil, "leaseUntil");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(observedAt, "observedAt");
    if (state.isTerminal() && result == null) {
      throw new IllegalArgumentException("a " + state + " record must carry a result");
    }
    this.id = id;
    this.state = state;
    this.fingerprint = fingerprint;
    this.token = token;
    this.leaseUntil = leaseUntil;
    this.expiresAt = expiresAt;
    this.recoveryPoint = recoveryPoint;
    this.result = result;
    this.observedAt = observedAt;
    this.createdAt = createdAt;
  }

  /** A record whose creation time is unknown ({@link #createdAt()} is {@code null}). */
  public IdempotencyRecord(
      RecordId id,
      RecordState state,
      Fingerprint fingerprint,
      long token,
      Instant leaseUntil,
      Instant expiresAt,
      byte @Nullable [] recoveryPoint,
      byte @Nullable [] result,
      Instant observedAt) {
    this(
        id,
        state,
        fingerprint,
        token,
        leaseUntil,
        expiresAt,
        recoveryPoint,
        result,
        observedAt,
        null);
  }

  /**
   * The time left on the lease by the store's clock; zero once it has ended, and for a finished
   * record, which no lease holds any more (its stored lease end is the one it was finished under).
   */
  public Duration leaseRemaining() {
    if (state.isTerminal()) {
      return Duration.ZERO;
    }
    Duration d = Duration.between(observedAt, leaseUntil);
    return d.isNegative() ? Duration.ZERO : d;
  }

  /**
   * How long the record has existed by the store's clock ({@link #observedAt()} minus {@link
   * #createdAt()}, never negative), or empty if its creation time is unknown.
   */
  public Optional<Duration> age() {
    if (createdAt == null) {
      return Optional.empty();
    }
    Duration d = Duration.between(createdAt, observedAt);
    return Optional.of(d.isNegative() ? Duration.ZERO : d);
  }

  /** Whether this record is in progress and its lease has ended, so a claim may steal it. */
  public boolean isStealable() {
    return state == RecordState.IN_PROGRESS && !observedAt.isBefore(leaseUntil);
  }

  public Optional<byte[]> recoveryPointIfAny() {
    return Optional.ofNullable(recoveryPoint);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IdempotencyRecord r
        && id.equals(r.id)
        && state == r.state
        && fingerprint.equals(r.fingerprint)
        && token == r.token
        && leaseUntil.equals(r.leaseUntil)
        && expiresAt.equals(r.expiresAt)
        && java.util.Arrays.equals(recoveryPoint, r.recoveryPoint)
        && java.util.Arrays.equals(result, r.result)
        && observedAt.equals(r.observedAt)
        && Objects.equals(createdAt, r.createdAt);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, state, fingerprint, token, leaseUntil, expiresAt, observedAt, createdAt)
        + 31 * java.util.Arrays.hashCode(result);
  }

  @Override
  public String toString() {
    // Never print the result or recovery point: they may hold personal data or secrets.
    return "IdempotencyRecord["
        + id
        + " "
        + state
        + " token="
        + token
        + " leaseUntil="
        + leaseUntil
        + " expiresAt="
        + expiresAt
        + " createdAt="
        + (createdAt == null ? "unknown" : createdAt)
        + " result="
        + (result == null ? "none" : result.length + " bytes")
        + "]";
  }
}

package dev.once.store.jdbc;

import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What a dialect's claim primitive read back: the record as it stands after the statement, and
 * whether this very statement granted the lease.
 *
 * @param claimed whether the caller now holds the lease
 * @param attempt 1 for a lease on a fresh record, more for a lease taken over from an earlier
 *     holder
 * @param record the record, or {@code null} if the statement saw none (a concurrent release or
 *     purge)
 */
record ClaimRow(boolean claimed, int attempt, @Nullable IdempotencyRecord record) {

  /**
   * The lease a claim granted: one taken over from an earlier holder (an attempt after the first)
   * hands on the recovery point that holder left.
   */
  static ClaimResult.Claimed lease(
      long token, Instant leaseUntil, int attempt, byte @Nullable [] recoveryPoint) {
    boolean stolen = attempt > 1;
    return new ClaimResult.Claimed(token, leaseUntil, stolen, stolen ? recoveryPoint : null);
  }
}

package dev.once;

import java.util.Optional;

/**
 * What a running operation knows about its lease. A multi-step operation saves a recovery point
 * after each step with {@link #checkpoint(byte[])}; if its worker dies, the next claimant steals
 * the lease and resumes from {@link #recoveryPoint()}.
 */
public interface ExecutionContext {

  /** The scope the operation runs under. */
  Scope scope();

  /** The key the operation runs under. */
  IdempotencyKey key();

  /**
   * The fencing token of this lease. Writes to other systems can carry it so that a zombie worker's
   * late writes are rejected there too.
   */
  long token();

  /** Whether this lease was stolen from a holder whose lease had ended. */
  boolean stolen();

  /**
   * The last recovery point the previous holder saved, if this lease was stolen and it saved one.
   */
  Optional<byte[]> recoveryPoint();

  /**
   * Saves a recovery point and extends the lease.
   *
   * @throws LeaseLostException if the lease was stolen; the operation should stop
   */
  void checkpoint(byte[] recoveryPoint);

  /** Whether the lease is known to be lost (a heartbeat or checkpoint was rejected). */
  boolean leaseLost();

  /**
   * The context of a run without a lease, as a fail-open policy runs when the store is down: token
   * 0, no recovery point, checkpoints go nowhere and the lease is never lost. For callers of {@link
   * Once#begin} that get {@link Admission.Unguarded}.
   */
  static ExecutionContext unguarded(Scope scope, IdempotencyKey key) {
    return new UnguardedContext(scope, key);
  }
}

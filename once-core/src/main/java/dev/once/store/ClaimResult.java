package dev.once.store;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** What an atomic claim produced: a new lease, or the record that was already there. */
public sealed interface ClaimResult {

  /** Calls the visitor's method for this variant: a new variant fails to compile until handled. */
  <R> R accept(Visitor<R> visitor);

  /** One method per variant of {@link ClaimResult}. */
  interface Visitor<R> {
    R claimed(Claimed claimed);

    R existing(Existing existing);
  }

  /**
   * The caller now holds the lease.
   *
   * @param token the fencing token every later write must present
   * @param leaseUntil when the lease ends, by the store's clock
   * @param stolen whether an earlier holder's lease ended and this claim took the record over
   * @param recoveryPoint the last checkpoint the earlier holder saved, or {@code null}
   */
  record Claimed(long token, Instant leaseUntil, boolean stolen, byte @Nullable [] recoveryPoint)
      implements ClaimResult {
    // Not a compact constructor: JDK 17's javac leaves the @Nullable of an array component off
    // a compact constructor's parameter in the class file, and NullAway in other modules would
    // then reject null.
    public Claimed(
        long token, Instant leaseUntil, boolean stolen, byte @Nullable [] recoveryPoint) {
      Objects.requireNonNull(leaseUntil, "leaseUntil");
      if (!stolen && recoveryPoint != null) {
        throw new IllegalArgumentException("a fresh claim has no recovery point");
      }
      this.token = token;
      this.leaseUntil = leaseUntil;
      this.stolen = stolen;
      this.recoveryPoint = recoveryPoint;
    }

    /**
     * Whether this claim may be undone by a release when nothing ran under it (a batch call that
     * failed after granting it, a message its consumer did not get to): a fresh claim may. A stolen
     * one may not; its lease is ended instead ({@link IdempotencyStore#giveBackUnused}). The lease
     * it took over may have done its work, or part of it, before it lapsed; a release would delete
     * the record and its recovery point, and the next claim would then start afresh, not steal the
     * record as it would have before this claim. Kept, the record is stolen by the next claim,
     * recovery point and all.
     */
    public boolean releasableUnused() {
      return !stolen;
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.claimed(this);
    }
  }

  /**
   * Someone else's record: in progress with a live lease, in progress with a different fingerprint,
   * or terminal. The store changed nothing.
   *
   * @param record the record as it stands
   */
  record Existing(IdempotencyRecord record) implements ClaimResult {
    public Existing {
      Objects.requireNonNull(record, "record");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.existing(this);
    }
  }
}

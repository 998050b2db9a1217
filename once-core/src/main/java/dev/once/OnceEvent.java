package dev.once;

import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;

/**
 * What the engine reports to an {@link OnceListener}, for metrics and logs. Events are created only
 * when a listener is registered. None of them carries a result body. Take one apart with {@link
 * #accept(Visitor)}, so that a listener learns at compile time of an event added later.
 */
public sealed interface OnceEvent {

  /**
   * One method per variant of {@link OnceEvent}. It has no default methods on purpose: a new event
   * adds a method here, and every visitor stops compiling until it decides what to do with it.
   *
   * @param <R> what the visit answers
   */
  interface Visitor<R> {
    R executed(Executed executed);

    R replayed(Replayed replayed);

    R inFlightConflict(InFlightConflict inFlightConflict);

    R fingerprintMismatch(FingerprintMismatch fingerprintMismatch);

    R leaseStolen(LeaseStolen leaseStolen);

    R leaseLost(LeaseLost leaseLost);

    R failOpen(FailOpen failOpen);

    R storeFailure(StoreFailure storeFailure);
  }

  /** Calls the visitor's method for this event and answers what it answers. */
  <R> R accept(Visitor<R> visitor);

  /** The record the event is about. */
  RecordId id();

  /** An operation ran and finished with this outcome; {@code nanos} is its duration. */
  record Executed(RecordId id, Outcome outcome, Recording recording, long nanos)
      implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.executed(this);
    }
  }

  /** A recorded outcome was replayed. */
  record Replayed(RecordId id, Outcome outcome) implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.replayed(this);
    }
  }

  /** A duplicate arrived while the first was in flight (after waiting, if the policy waits). */
  record InFlightConflict(RecordId id) implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.inFlightConflict(this);
    }
  }

  /** A key was reused with a different request. */
  record FingerprintMismatch(RecordId id) implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.fingerprintMismatch(this);
    }
  }

  /** A lease whose holder stopped heartbeating was taken over. */
  record LeaseStolen(RecordId id, long token) implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.leaseStolen(this);
    }
  }

  /** This worker's lease was taken over while it ran (it was a zombie). */
  record LeaseLost(RecordId id, long token) implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.leaseLost(this);
    }
  }

  /** The store failed and the policy let the operation run unguarded. */
  record FailOpen(RecordId id, StoreUnavailableException cause) implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.failOpen(this);
    }
  }

  /** The store failed; with fail-closed the caller was refused. */
  record StoreFailure(RecordId id, StoreUnavailableException cause) implements OnceEvent {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.storeFailure(this);
    }
  }
}

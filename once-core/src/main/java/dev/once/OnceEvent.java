package dev.once;

import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;

/**
 * What the engine reports to an {@link OnceListener}, for metrics and logs. Events are created only
 * when a listener is registered. None of them carries a result body.
 */
public sealed interface OnceEvent {

  /** The record the event is about. */
  RecordId id();

  /** An operation ran and finished with this outcome; {@code nanos} is its duration. */
  record Executed(RecordId id, Outcome outcome, Recording recording, long nanos) implements OnceEvent {}

  /** A recorded outcome was replayed. */
  record Replayed(RecordId id, Outcome outcome) implements OnceEvent {}

  /** A duplicate arrived while the first was in flight (after waiting, if the policy waits). */
  record InFlightConflict(RecordId id) implements OnceEvent {}

  /** A key was reused with a different request. */
  record FingerprintMismatch(RecordId id) implements OnceEvent {}

  /** A lease whose holder stopped heartbeating was taken over. */
  record LeaseStolen(RecordId id, long token) implements OnceEvent {}

  /** This worker's lease was taken over while it ran (it was a zombie). */
  record LeaseLost(RecordId id, long token) implements OnceEvent {}

  /** The store failed and the policy let the operation run unguarded. */
  record FailOpen(RecordId id, StoreUnavailableException cause) implements OnceEvent {}

  /** The store failed; with fail-closed the caller was refused. */
  record StoreFailure(RecordId id, StoreUnavailableException cause) implements OnceEvent {}
}

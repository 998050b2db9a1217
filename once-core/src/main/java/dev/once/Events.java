package dev.once;

import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;

/**
 * Turns engine happenings into {@link OnceEvent}s for a listener. With {@link OnceListener#NONE}
 * the engine holds {@link #SILENT}, whose methods do nothing, so no event is ever allocated and the
 * hot path never asks whether anyone listens.
 */
class Events {

  static final Events SILENT =
      new Events(OnceListener.NONE) {
        @Override
        void executed(RecordId id, Outcome o, Recording r, long nanos) {}

        @Override
        void replayed(RecordId id, Outcome o) {}

        @Override
        void inFlightConflict(RecordId id) {}

        @Override
        void fingerprintMismatch(RecordId id) {}

        @Override
        void leaseStolen(RecordId id, long token) {}

        @Override
        void leaseLost(RecordId id, long token) {}

        @Override
        void failOpen(RecordId id, StoreUnavailableException e) {}

        @Override
        void storeFailure(RecordId id, StoreUnavailableException e) {}
      };

  private final OnceListener listener;

  private Events(OnceListener listener) {
    this.listener = listener;
  }

  static Events of(OnceListener listener) {
    return listener == OnceListener.NONE ? SILENT : new Events(listener);
  }

  void executed(RecordId id, Outcome o, Recording r, long nanos) {
    emit(new OnceEvent.Executed(id, o, r, nanos));
  }

  void replayed(RecordId id, Outcome o) {
    emit(new OnceEvent.Replayed(id, o));
  }

  void inFlightConflict(RecordId id) {
    emit(new OnceEvent.InFlightConflict(id));
  }

  void fingerprintMismatch(RecordId id) {
    emit(new OnceEvent.FingerprintMismatch(id));
  }

  void leaseStolen(RecordId id, long token) {
    emit(new OnceEvent.LeaseStolen(id, token));
  }

  void leaseLost(RecordId id, long token) {
    emit(new OnceEvent.LeaseLost(id, token));
  }

  void failOpen(RecordId id, StoreUnavailableException e) {
    emit(new OnceEvent.FailOpen(id, e));
  }

  void storeFailure(RecordId id, StoreUnavailableException e) {
    emit(new OnceEvent.StoreFailure(id, e));
  }

  private void emit(OnceEvent event) {
    try {
      listener.onEvent(event);
    } catch (RuntimeException e) {
      // A broken listener must never break an execution.
      org.slf4j.LoggerFactory.getLogger(Events.class)
          .warn("listener failed on {}", event.getClass().getSimpleName(), e);
    }
  }
}

package dev.once.store;

/** The stored state of a record. An absent or expired record has no state. */
public enum RecordState {
  /**
   * A lease holder is executing; the lease may have ended, in which case the record can be stolen.
   */
  IN_PROGRESS,
  /** Finished successfully; the result is replayed. */
  COMPLETED,
  /** Finished with a deterministic business failure; the result is replayed. */
  FAILED_FINAL;

  /** Whether this state is final: the record only changes again when it expires. */
  public boolean isTerminal() {
    return this != IN_PROGRESS;
  }
}

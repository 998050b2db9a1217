package dev.once;

/** What became of an execution's outcome in the store. */
public enum Recording {
  /** Stored: every retry gets it back. */
  RECORDED,
  /** The outcome was transient: the key was released so a retry executes afresh. */
  RELEASED,
  /**
   * The operation counts as done, but its result could not be stored (over the size cap, or the
   * codec failed): a retry gets {@link ExecutionResult.ResponseUnavailable}, never a second run.
   */
  RESULT_NOT_STORED,
  /** The lease was stolen while the operation ran: the store kept the new owner's record. */
  LEASE_LOST,
  /**
   * The store failed while recording. The record stays in progress until its lease ends, after
   * which a retry may run the operation again.
   */
  UNKNOWN,
  /** The store was unavailable and the policy was fail-open: nothing was recorded. */
  UNGUARDED
}

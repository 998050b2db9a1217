package dev.once;

/** What to do when the store cannot be reached. */
public enum FailureMode {
  /**
   * Refuse to execute and tell the caller to retry later. Safe: never runs unguarded. The default.
   */
  FAIL_CLOSED,
  /** Execute without protection: duplicates may run twice. Counted and logged every time. */
  FAIL_OPEN
}

package dev.once;

/** How an execution ended, which decides what happens to the key. */
public enum Outcome {
  /** Success: recorded and replayed to every retry. */
  COMPLETED,
  /** A deterministic business failure (insufficient funds, validation): recorded and replayed. */
  FAILED_FINAL,
  /** Worth retrying (a timeout, a 503, an exception): never recorded; the key is released. */
  TRANSIENT
}

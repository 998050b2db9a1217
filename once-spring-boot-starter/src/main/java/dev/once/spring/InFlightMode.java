package dev.once.spring;

/** What a duplicate does while the first request with its key still runs. */
public enum InFlightMode {
  /** Answer 409 {@code idempotency-request-in-flight} with {@code Retry-After} at once. */
  REJECT,
  /**
   * Hold the duplicate until the first finishes (at most {@code max-wait}), then replay its
   * response.
   */
  WAIT
}

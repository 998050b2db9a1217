package dev.once.spring;

import java.time.Duration;

/**
 * Another call with the same key is running (and, in wait mode, did not finish within {@code
 * max-wait}). The method did not run; retry after {@link #retryAfter()}.
 */
public final class IdempotencyInFlightException extends IdempotentMethodException {

  private final Duration retryAfter;

  IdempotencyInFlightException(String method, Duration retryAfter) {
    super("a call of " + method + " with the same key is in flight", null);
    this.retryAfter = retryAfter;
  }

  /** The remaining lease of the call in flight, by the store's clock, at least one second. */
  public Duration retryAfter() {
    return retryAfter;
  }
}

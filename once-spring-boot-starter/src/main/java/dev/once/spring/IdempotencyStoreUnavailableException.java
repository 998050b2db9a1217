package dev.once.spring;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;

/**
 * The store could not be reached and the policy is fail-closed (the default): the method did not
 * run; retry after {@link #retryAfter()}.
 */
public final class IdempotencyStoreUnavailableException extends IdempotentMethodException {

  private final Duration retryAfter;

  IdempotencyStoreUnavailableException(
      String method, Duration retryAfter, StoreUnavailableException cause) {
    super("the idempotency store is unavailable; " + method + " did not run", cause);
    this.retryAfter = retryAfter;
  }

  /** The policy's {@code store-retry-after}. */
  public Duration retryAfter() {
    return retryAfter;
  }
}

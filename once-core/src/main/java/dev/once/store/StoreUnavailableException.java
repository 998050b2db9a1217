package dev.once.store;

import org.jspecify.annotations.Nullable;

/**
 * The store could not be reached or did not answer in time. The outcome of the operation that threw
 * it is unknown to the caller only for writes; reads and claims change nothing when they fail. The
 * engine maps it to fail-closed (an error with a retry hint) or fail-open per policy.
 */
public class StoreUnavailableException extends RuntimeException {

  public StoreUnavailableException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }

  public StoreUnavailableException(String message) {
    super(message);
  }
}

package dev.once.store;

/**
 * A bounded store holds its maximum number of live records and refuses a new claim rather than
 * evicting a record someone still relies on. Treated like an unavailable store: nothing was stored.
 */
public final class StoreFullException extends StoreUnavailableException {

  public StoreFullException(String message) {
    super(message);
  }
}

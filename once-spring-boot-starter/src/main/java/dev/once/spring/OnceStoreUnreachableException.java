package dev.once.spring;

/**
 * The store Once picked did not answer at startup: {@link StoreUnreachableFailureAnalyzer} reports
 * it as one line naming the store, and what to do, instead of a stack trace.
 */
final class OnceStoreUnreachableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String action;

  OnceStoreUnreachableException(String message, String action, Throwable cause) {
    super(message, cause);
    this.action = action;
  }

  String action() {
    return action;
  }
}

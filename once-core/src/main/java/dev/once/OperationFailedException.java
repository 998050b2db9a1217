package dev.once;

/**
 * Carries a checked exception thrown by an operation that was judged transient: the key was
 * released and a retry executes afresh. Unchecked exceptions and errors propagate unwrapped.
 */
public final class OperationFailedException extends RuntimeException {

  public OperationFailedException(Throwable cause) {
    super(cause.toString(), cause);
  }
}

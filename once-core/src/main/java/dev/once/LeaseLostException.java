package dev.once;

/**
 * The lease ended and another worker took the record over: this worker is a zombie and none of its
 * writes to the record will be accepted. Stop the work.
 */
public final class LeaseLostException extends RuntimeException {

  public LeaseLostException(String message) {
    super(message, null, false, false);
  }
}

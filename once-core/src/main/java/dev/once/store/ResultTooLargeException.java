package dev.once.store;

/**
 * A store cannot keep a result or recovery point this large (a DynamoDB item holds 400 KB). Thrown
 * before anything is written: the record is unchanged. The engine answers it by recording the
 * outcome without its result, so the operation still counts as done and is never run again.
 */
public final class ResultTooLargeException extends IllegalArgumentException {

  public ResultTooLargeException(String message) {
    super(message);
  }
}

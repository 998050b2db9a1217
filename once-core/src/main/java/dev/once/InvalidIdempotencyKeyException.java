package dev.once;

/**
 * Thrown when an idempotency key or an {@code Idempotency-Key} header value is malformed. Nothing
 * is stored when this is thrown. HTTP integrations map it to a 400 problem of type {@code
 * idempotency-key-invalid}.
 */
public final class InvalidIdempotencyKeyException extends IllegalArgumentException {

  public InvalidIdempotencyKeyException(String message) {
    super(message);
  }
}

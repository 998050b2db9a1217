package dev.once.spring;

/**
 * The method ran before with this key and counts as done, but its result cannot be handed back: it
 * could not be encoded, was larger than {@code max-response-bytes}, or cannot be decoded now (the
 * return type changed). The method is not run again.
 */
public final class IdempotencyResultUnavailableException extends IdempotentMethodException {

  IdempotencyResultUnavailableException(String method) {
    super(method + " ran before with this key, but its result is not available", null);
  }
}

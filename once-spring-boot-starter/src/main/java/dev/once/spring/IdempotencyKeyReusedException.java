package dev.once.spring;

/**
 * The key was used before with different fingerprinted arguments. The method did not run, and the
 * earlier result is never revealed.
 */
public final class IdempotencyKeyReusedException extends IdempotentMethodException {

  IdempotencyKeyReusedException(String method) {
    super("the key was used before with other arguments for " + method, null);
  }
}

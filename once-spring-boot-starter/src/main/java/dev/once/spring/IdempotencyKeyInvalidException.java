package dev.once.spring;

import org.jspecify.annotations.Nullable;

/**
 * The call's key, scope or fingerprint could not be computed from its arguments: the key expression
 * gave null or a malformed key, an expression failed, or an argument to fingerprint could not be
 * written as JSON. Nothing was claimed and the method did not run.
 */
public final class IdempotencyKeyInvalidException extends IdempotentMethodException {

  IdempotencyKeyInvalidException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}

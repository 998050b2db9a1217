package dev.once.spring;

import org.jspecify.annotations.Nullable;

/**
 * Why an {@link Idempotent} method neither ran nor replayed a result. Each subclass is one answer
 * of the engine, named like the HTTP problem type of the same situation (docs/http.md); catch this
 * type for all of them. Messages name the method, never the key or the arguments.
 */
public abstract sealed class IdempotentMethodException extends RuntimeException
    permits IdempotencyKeyInvalidException,
        IdempotencyInFlightException,
        IdempotencyKeyReusedException,
        IdempotencyResultUnavailableException,
        IdempotencyStoreUnavailableException {

  IdempotentMethodException(String message, @Nullable Throwable cause) {
    super(message, cause);
  }
}

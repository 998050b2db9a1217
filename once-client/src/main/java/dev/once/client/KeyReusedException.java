package dev.once.client;

import org.jspecify.annotations.Nullable;

/**
 * The server refused the request because its key was used before with a different request (HTTP
 * 422, problem {@code idempotency-key-reused}). Never retried: the key belongs to another
 * operation, and repeating this request cannot succeed. Use a new key for a new operation.
 */
public final class KeyReusedException extends OnceClientException {

  KeyReusedException(@Nullable String key, int attempts) {
    super(
        "The Idempotency-Key was used before with a different request (HTTP 422); use a new key for "
            + "a new operation",
        key,
        attempts,
        null);
  }
}

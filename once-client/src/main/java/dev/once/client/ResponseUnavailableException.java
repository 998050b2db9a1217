package dev.once.client;

import org.jspecify.annotations.Nullable;

/**
 * The operation happened, but the server cannot replay its answer (HTTP 409, problem {@code
 * idempotency-response-unavailable}: the first answer was streamed or too large to store). Never
 * retried: the effect exists; look its result up another way.
 */
public final class ResponseUnavailableException extends OnceClientException {

  ResponseUnavailableException(@Nullable String key, int attempts) {
    super(
        "The operation was processed, but the server cannot replay its response (HTTP 409); do not "
            + "repeat it, look the result up instead",
        key,
        attempts,
        null);
  }
}

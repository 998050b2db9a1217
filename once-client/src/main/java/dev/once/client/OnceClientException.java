package dev.once.client;

import java.io.IOException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Why a call of {@link OnceHttpClient} ended without a response to hand back. Sealed: switch over
 * the three cases. Each carries the idempotency key the call used, so that the operation can be
 * looked up or retried later with the same key, and how many requests were sent.
 */
public abstract sealed class OnceClientException extends IOException
    permits KeyReusedException, ResponseUnavailableException, RetriesExhaustedException {

  private final @Nullable String key;
  private final int attempts;

  OnceClientException(
      String message, @Nullable String key, int attempts, @Nullable Throwable cause) {
    super(message, cause);
    this.key = key;
    this.attempts = attempts;
  }

  /** The {@code Idempotency-Key} every attempt carried; empty for a request sent without one. */
  public Optional<String> idempotencyKey() {
    return Optional.ofNullable(key);
  }

  /** How many requests were sent, at least one. */
  public int attempts() {
    return attempts;
  }
}

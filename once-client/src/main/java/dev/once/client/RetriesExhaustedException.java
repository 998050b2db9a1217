package dev.once.client;

import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * Every allowed attempt failed in a retryable way, or the deadline came first. Whether the
 * operation happened is unknown; repeating it later with the same {@linkplain #idempotencyKey()
 * key} is safe. The cause is the last I/O error, if the last attempt ended in one.
 */
public final class RetriesExhaustedException extends OnceClientException {

  /** What ended the retries. */
  public enum Reason {
    /** The client's {@code maxAttempts} requests were sent. */
    MAX_ATTEMPTS,
    /** The client's {@code deadline} passed, or the next wait would have passed it. */
    DEADLINE
  }

  private final Reason reason;
  private final int lastStatus;

  RetriesExhaustedException(
      Reason reason,
      @Nullable String key,
      int attempts,
      int lastStatus,
      @Nullable Throwable cause) {
    super(message(reason, attempts, lastStatus, cause), key, attempts, cause);
    this.reason = reason;
    this.lastStatus = lastStatus;
  }

  private static String message(
      Reason reason, int attempts, int lastStatus, @Nullable Throwable cause) {
    String last =
        lastStatus > 0
            ? "HTTP " + lastStatus
            : cause != null ? cause.getClass().getSimpleName() : "no answer";
    return (reason == Reason.DEADLINE ? "Deadline reached" : "Gave up")
        + " after "
        + attempts
        + " attempt(s); the last ended in "
        + last;
  }

  public Reason reason() {
    return reason;
  }

  /** The status of the last answer, or empty when the last attempt got none (an I/O error). */
  public OptionalInt lastStatus() {
    return lastStatus > 0 ? OptionalInt.of(lastStatus) : OptionalInt.empty();
  }
}

package dev.once.client;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.util.Locale;
import java.util.Set;

/**
 * Which calls may be repeated, and after which failures. The table is in {@code docs/client.md}.
 */
final class Retries {

  /** How a call may be repeated. */
  enum Mode {
    /** It carries an idempotency key: every transient failure is retried with the same key. */
    KEYED,
    /**
     * Idempotent by its method (RFC 9110 §9.2.2): every transient failure is retried, without a
     * key.
     */
    IDEMPOTENT,
    /** Neither: retried only when it certainly never reached the server (the connection failed). */
    UNSAFE
  }

  private static final Set<String> IDEMPOTENT_METHODS =
      Set.of("GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE");

  private Retries() {}

  static Mode mode(String method, boolean keyed) {
    if (keyed) {
      return Mode.KEYED;
    }
    return IDEMPOTENT_METHODS.contains(method.toUpperCase(Locale.ROOT))
        ? Mode.IDEMPOTENT
        : Mode.UNSAFE;
  }

  /**
   * 408, 429 and every 5xx but 501 and 505, which say the method or the HTTP version will never be
   * supported. A Once server releases the key after these, so a retry runs afresh.
   */
  static boolean transientStatus(int status) {
    return status == 408
        || status == 429
        || (status >= 500 && status <= 599 && status != 501 && status != 505);
  }

  /** Whether a call in {@code mode} may be repeated after {@code failure}. */
  static boolean retryable(IOException failure, Mode mode) {
    if (failure instanceof OnceClientException) {
      return false;
    }
    return mode != Mode.UNSAFE
        || failure instanceof ConnectException
        || failure instanceof HttpConnectTimeoutException;
  }
}

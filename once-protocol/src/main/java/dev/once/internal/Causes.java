package dev.once.internal;

/**
 * Why a connection failed, in an operator's words: the one wording every front end prints when a
 * store is unreachable at startup. Not part of Once's API.
 */
public final class Causes {

  private Causes() {}

  /**
   * "connection refused", "unknown host" or "timed out" where a socket said so anywhere in the
   * chain (drivers word them each their own way), else the innermost message, which names the cause
   * where the outer ones only say which layer gave up. Bounded by the chain's length.
   */
  public static String unreachable(Throwable cause) {
    String innermost = null;
    int depth = 0;
    for (Throwable c = cause; c != null && depth < 20; c = c.getCause(), depth++) {
      if (c instanceof java.net.ConnectException) {
        return "connection refused";
      }
      if (c instanceof java.net.UnknownHostException) {
        return "unknown host";
      }
      if (c instanceof java.net.SocketTimeoutException) {
        return "timed out";
      }
      if (c.getMessage() != null) {
        innermost = c.getMessage();
      }
    }
    return innermost == null ? cause.getClass().getSimpleName() : innermost;
  }
}

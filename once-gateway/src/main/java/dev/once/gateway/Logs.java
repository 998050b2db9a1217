package dev.once.gateway;

/** Makes request-derived text safe for one log line or one JSON string. */
final class Logs {

  private Logs() {}

  /**
   * {@code s} with control characters escaped, so nobody can forge a second log line: C0 and C1
   * controls and DEL (as a backslash, x and two hex digits), and the Unicode line and paragraph
   * separators, at which some log viewers break lines (as a backslash, u and four hex digits).
   */
  static String safe(String s) {
    if (s == null) {
      return "-";
    }
    StringBuilder out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean control = c < 0x20 || (c >= 0x7F && c <= 0x9F);
      if (control || c == 0x2028 || c == 0x2029) {
        if (out == null) {
          out = new StringBuilder(s.length() + 8).append(s, 0, i);
        }
        out.append(control ? String.format("\\x%02x", (int) c) : String.format("\\u%04x", (int) c));
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? s : out.toString();
  }

  /**
   * What failed, for a log line: the class names along the cause chain ({@code EOFException <-
   * ClosedChannelException}). Never the messages: Jetty's carry the request line, query string
   * included, and a query may hold secrets.
   */
  static String failure(Throwable failure) {
    StringBuilder s = new StringBuilder(failure.getClass().getSimpleName());
    Throwable seen = failure;
    for (int depth = 0; depth < 8 && seen.getCause() != null && seen.getCause() != seen; depth++) {
      seen = seen.getCause();
      s.append(" <- ").append(seen.getClass().getSimpleName());
    }
    return s.toString();
  }

  /** A JSON string literal of {@code s}. */
  static String jsonString(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }
}

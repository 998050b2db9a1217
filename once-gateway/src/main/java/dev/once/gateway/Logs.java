package dev.once.gateway;

/** Makes request-derived text safe for one log line or one JSON string. */
final class Logs {

  private Logs() {}

  /** {@code s} with control characters escaped, so nobody can forge a second log line. */
  static String safe(String s) {
    if (s == null) {
      return "-";
    }
    StringBuilder out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7F) {
        if (out == null) {
          out = new StringBuilder(s.length() + 8).append(s, 0, i);
        }
        out.append(String.format("\\x%02x", (int) c));
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? s : out.toString();
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

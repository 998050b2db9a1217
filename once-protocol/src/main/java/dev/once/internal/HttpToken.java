package dev.once.internal;

/**
 * The HTTP token (RFC 9110 §5.6.2): one or more visible ASCII characters other than delimiters.
 * Methods and header field names are tokens; Once's builders check configured names with it and the
 * gateway checks request methods with it, so all of them agree on one character set.
 *
 * <p>Internal: shared by Once's modules, not part of its API.
 */
public final class HttpToken {

  /** The characters beside letters and digits that a token may hold. */
  private static final String SYMBOLS = "!#$%&'*+-.^_`|~";

  private HttpToken() {}

  /** Whether {@code text} is a token of at most {@code maxLength} characters. */
  public static boolean is(String text, int maxLength) {
    int length = text.length();
    if (length == 0 || length > maxLength) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      char c = text.charAt(i);
      boolean tchar =
          (c >= 'A' && c <= 'Z')
              || (c >= 'a' && c <= 'z')
              || (c >= '0' && c <= '9')
              || SYMBOLS.indexOf(c) >= 0;
      if (!tchar) {
        return false;
      }
    }
    return true;
  }
}

package dev.once.internal;

import java.util.function.Function;

/**
 * The syntax of an idempotency key, for the engine's {@code IdempotencyKey} and for the HTTP
 * client, which does not depend on the engine: 1 to 255 printable ASCII characters ({@code
 * 0x21}–{@code 0x7E}), sent either bare or as an RFC 8941 structured-field string. Each caller
 * names the exception it throws, so that the engine keeps its own exception type.
 *
 * <p>Internal: shared by Once's modules, not part of its API.
 */
public final class KeySyntax {

  /** The longest key accepted. */
  public static final int MAX_LENGTH = 255;

  private KeySyntax() {}

  /**
   * {@code value}, if it is a valid key; otherwise throws what {@code invalid} makes of the reason.
   */
  public static String check(String value, Function<String, ? extends RuntimeException> invalid) {
    if (value == null) {
      throw invalid.apply("idempotency key is missing");
    }
    if (value.isEmpty()) {
      throw invalid.apply("idempotency key is empty");
    }
    if (value.length() > MAX_LENGTH) {
      throw invalid.apply(
          "idempotency key is "
              + value.length()
              + " characters long; at most "
              + MAX_LENGTH
              + " are allowed");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw invalid.apply(
            "idempotency key has a character outside printable ASCII (0x21-0x7E) at index "
                + i
                + " (code "
                + (int) c
                + ")");
      }
    }
    return value;
  }

  /**
   * The key an {@code Idempotency-Key} header value carries, checked: optional surrounding spaces
   * or tabs, then either a structured-field string ({@code "..."} with {@code \"} and {@code \\}
   * escapes, RFC 8941 §3.3.3) or a bare value. A value that starts with a quote must be a complete
   * sf-string.
   */
  public static String parseHeader(
      String headerValue, Function<String, ? extends RuntimeException> invalid) {
    if (headerValue == null) {
      throw invalid.apply("idempotency key header is missing");
    }
    int start = 0;
    int end = headerValue.length();
    while (start < end && isOws(headerValue.charAt(start))) {
      start++;
    }
    while (end > start && isOws(headerValue.charAt(end - 1))) {
      end--;
    }
    if (start == end) {
      throw invalid.apply("idempotency key header is empty");
    }
    if (headerValue.charAt(start) != '"') {
      return check(headerValue.substring(start, end), invalid);
    }
    StringBuilder out = new StringBuilder(Math.min(end - start, MAX_LENGTH + 1));
    int i = start + 1;
    while (i < end) {
      char c = headerValue.charAt(i);
      if (c == '\\') {
        if (i + 1 >= end) {
          throw invalid.apply("idempotency key header ends inside an escape");
        }
        char next = headerValue.charAt(i + 1);
        if (next != '"' && next != '\\') {
          throw invalid.apply(
              "idempotency key header has an invalid escape at index "
                  + i
                  + " (only \\\" and \\\\ are allowed)");
        }
        out.append(next);
        i += 2;
      } else if (c == '"') {
        if (i != end - 1) {
          throw invalid.apply(
              "idempotency key header has characters after the closing quote at index " + i);
        }
        return check(out.toString(), invalid);
      } else if (c < 0x20 || c > 0x7E) {
        throw invalid.apply(
            "idempotency key header has a character outside printable ASCII at index "
                + i
                + " (code "
                + (int) c
                + ")");
      } else {
        out.append(c);
        i++;
      }
      if (out.length() > MAX_LENGTH) {
        throw invalid.apply("idempotency key is longer than " + MAX_LENGTH + " characters");
      }
    }
    throw invalid.apply("idempotency key header has an unterminated quoted string");
  }

  private static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }
}

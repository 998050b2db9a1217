package dev.once;

/**
 * The client's idempotency key: 1 to 255 printable ASCII characters ({@code 0x21}–{@code 0x7E}).
 *
 * <p>Create one from a raw value with {@link #of(String)}, or from an {@code Idempotency-Key}
 * header value with {@link #parseHeader(String)}, which accepts both the structured-field string
 * of draft-ietf-httpapi-idempotency-key-header ({@code "abc"}) and the bare form most clients send
 * ({@code abc}). Both throw {@link InvalidIdempotencyKeyException} for anything else.
 *
 * @param value the key, already unquoted
 */
public record IdempotencyKey(String value) {

  /** The longest key accepted. */
  public static final int MAX_LENGTH = 255;

  public IdempotencyKey {
    if (value == null) {
      throw new InvalidIdempotencyKeyException("idempotency key is missing");
    }
    if (value.isEmpty()) {
      throw new InvalidIdempotencyKeyException("idempotency key is empty");
    }
    if (value.length() > MAX_LENGTH) {
      throw new InvalidIdempotencyKeyException(
          "idempotency key is " + value.length() + " characters long; at most " + MAX_LENGTH + " are allowed");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x21 || c > 0x7E) {
        throw new InvalidIdempotencyKeyException(
            "idempotency key has a character outside printable ASCII (0x21-0x7E) at index " + i
                + " (code " + (int) c + ")");
      }
    }
  }

  /** Returns the key for a raw, unquoted value. */
  public static IdempotencyKey of(String value) {
    return new IdempotencyKey(value);
  }

  /**
   * Parses an {@code Idempotency-Key} header value: optional surrounding spaces or tabs, then either
   * a structured-field string ({@code "..."} with {@code \"} and {@code \\} escapes, RFC 8941 §3.3.3)
   * or a bare value. A value that starts with a quote must be a complete sf-string.
   */
  public static IdempotencyKey parseHeader(String headerValue) {
    if (headerValue == null) {
      throw new InvalidIdempotencyKeyException("idempotency key header is missing");
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
      throw new InvalidIdempotencyKeyException("idempotency key header is empty");
    }
    if (headerValue.charAt(start) != '"') {
      return new IdempotencyKey(headerValue.substring(start, end));
    }
    StringBuilder out = new StringBuilder(Math.min(end - start, MAX_LENGTH + 1));
    int i = start + 1;
    while (i < end) {
      char c = headerValue.charAt(i);
      if (c == '\\') {
        if (i + 1 >= end) {
          throw new InvalidIdempotencyKeyException("idempotency key header ends inside an escape");
        }
        char next = headerValue.charAt(i + 1);
        if (next != '"' && next != '\\') {
          throw new InvalidIdempotencyKeyException(
              "idempotency key header has an invalid escape at index " + i + " (only \\\" and \\\\ are allowed)");
        }
        out.append(next);
        i += 2;
      } else if (c == '"') {
        if (i != end - 1) {
          throw new InvalidIdempotencyKeyException(
              "idempotency key header has characters after the closing quote at index " + i);
        }
        return new IdempotencyKey(out.toString());
      } else if (c < 0x20 || c > 0x7E) {
        throw new InvalidIdempotencyKeyException(
            "idempotency key header has a character outside printable ASCII at index " + i + " (code " + (int) c + ")");
      } else {
        out.append(c);
        i++;
      }
      if (out.length() > MAX_LENGTH) {
        throw new InvalidIdempotencyKeyException(
            "idempotency key is longer than " + MAX_LENGTH + " characters");
      }
    }
    throw new InvalidIdempotencyKeyException("idempotency key header has an unterminated quoted string");
  }

  private static boolean isOws(char c) {
    return c == ' ' || c == '\t';
  }

  @Override
  public String toString() {
    return value;
  }
}

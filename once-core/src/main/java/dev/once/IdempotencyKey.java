package dev.once;

import dev.once.internal.KeySyntax;

/**
 * The client's idempotency key: 1 to 255 printable ASCII characters ({@code 0x21}–{@code 0x7E}).
 *
 * <p>Create one from a raw value with {@link #of(String)}, or from an {@code Idempotency-Key}
 * header value with {@link #parseHeader(String)}, which accepts both the structured-field string of
 * draft-ietf-httpapi-idempotency-key-header ({@code "abc"}) and the bare form most clients send
 * ({@code abc}). Both throw {@link InvalidIdempotencyKeyException} for anything else.
 *
 * @param value the key, already unquoted
 */
public record IdempotencyKey(String value) {

  /** The longest key accepted. */
  public static final int MAX_LENGTH = KeySyntax.MAX_LENGTH;

  public IdempotencyKey {
    KeySyntax.check(value, InvalidIdempotencyKeyException::new);
  }

  /** Returns the key for a raw, unquoted value. */
  public static IdempotencyKey of(String value) {
    return new IdempotencyKey(value);
  }

  /**
   * Parses an {@code Idempotency-Key} header value: optional surrounding spaces or tabs, then
   * either a structured-field string ({@code "..."} with {@code \"} and {@code \\} escapes, RFC
   * 8941 §3.3.3) or a bare value. A value that starts with a quote must be a complete sf-string.
   */
  public static IdempotencyKey parseHeader(String headerValue) {
    return new IdempotencyKey(
        KeySyntax.parseHeader(headerValue, InvalidIdempotencyKeyException::new));
  }

  @Override
  public String toString() {
    return value;
  }
}

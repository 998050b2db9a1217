package dev.once;

import dev.once.internal.Arguments;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Who owns a key: a tenant, principal or hashed API key, usually combined with the route. Records
 * are unique on (scope, key), and two scopes never see each other's records.
 *
 * <p>Build one from parts with {@link #of(String...)}; parts are joined with {@code /} after
 * percent-encoding {@code %} and {@code /} inside each part, so that distinct part lists never
 * collide. Derive a part from a secret (an API key, a bearer token) with {@link #hash(String)} so
 * that the secret itself is never stored.
 *
 * @param value the encoded scope: 1 to {@value #MAX_LENGTH} characters, no control characters
 */
public record Scope(String value) {

  /** The longest encoded scope accepted; stores size their columns for it. */
  public static final int MAX_LENGTH = 512;

  /** The scope used when there is no tenant: everything shares one namespace. */
  public static final Scope GLOBAL = new Scope("-");

  public Scope {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("scope must not be empty");
    }
    if (value.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          "scope is "
              + value.length()
              + " characters long; at most "
              + MAX_LENGTH
              + " are allowed");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c == 0x7F) {
        throw new IllegalArgumentException("scope has a control character at index " + i);
      }
      if (Character.isSurrogate(c)) {
        boolean paired =
            Character.isHighSurrogate(c)
                && i + 1 < value.length()
                && Character.isLowSurrogate(value.charAt(i + 1));
        if (!paired) {
          throw new IllegalArgumentException("scope has a lone surrogate at index " + i);
        }
        i++;
      }
    }
  }

  /** Returns the scope made of these parts, in order. */
  public static Scope of(String... parts) {
    if (parts == null || parts.length == 0) {
      throw new IllegalArgumentException("scope needs at least one part");
    }
    int length = parts.length;
    for (int i = 0; i < parts.length; i++) {
      if (parts[i] == null) {
        throw new IllegalArgumentException("scope part " + i + " is null");
      }
      length += parts[i].length();
    }
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < parts.length; i++) {
      if (i > 0) {
        sb.append('/');
      }
      String p = parts[i];
      if (p.indexOf('%') < 0 && p.indexOf('/') < 0) {
        sb.append(p); // nothing to encode, as in most parts: no copy a character at a time
        continue;
      }
      for (int j = 0; j < p.length(); j++) {
        char c = p.charAt(j);
        if (c == '%') {
          sb.append("%25");
        } else if (c == '/') {
          sb.append("%2F");
        } else {
          sb.append(c);
        }
      }
    }
    return new Scope(sb.toString());
  }

  /**
   * Returns {@code sha256:} followed by the lowercase hex SHA-256 of the secret's UTF-8 bytes: a
   * scope part that identifies the holder of a secret without storing it.
   */
  public static String hash(String secret) {
    Arguments.present("secret", secret);
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  @Override
  public String toString() {
    return value;
  }
}

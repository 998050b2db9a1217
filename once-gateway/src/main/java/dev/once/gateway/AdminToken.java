package dev.once.gateway;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The admin API's bearer token. Only its SHA-256 is kept, and a presented token is compared by
 * digest with {@link MessageDigest#isEqual}, so the comparison takes the same time whatever the
 * presented token's length or the position of its first wrong character.
 */
final class AdminToken {

  private static final String BEARER = "Bearer ";

  private final byte[] digest;

  AdminToken(String token) {
    this.digest = sha256(token);
  }

  /** Whether an {@code Authorization} header value carries the token. */
  boolean matches(String authorization) {
    if (authorization == null
        || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
      // Still hash something, so a missing header takes as long as a wrong one.
      MessageDigest.isEqual(digest, sha256(""));
      return false;
    }
    return MessageDigest.isEqual(digest, sha256(authorization.substring(BEARER.length()).trim()));
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }

  @Override
  public String toString() {
    return "AdminToken[***]";
  }
}

package dev.once;

import java.util.Objects;

/**
 * One of the keys {@link Once#beginAll} claims together.
 *
 * @param scope the key's scope
 * @param key the idempotency key
 * @param fingerprint what the request carries, compared with an earlier one under the same key
 */
public record Claim(Scope scope, IdempotencyKey key, Fingerprint fingerprint) {

  public Claim {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(fingerprint, "fingerprint");
  }
}

package dev.once.store;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import java.util.Objects;

/**
 * The identity of a record: the (scope, key) pair it is unique on.
 *
 * @param scope who owns the key
 * @param key the idempotency key
 */
public record RecordId(Scope scope, IdempotencyKey key) {

  public RecordId {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(key, "key");
  }

  public static RecordId of(Scope scope, IdempotencyKey key) {
    return new RecordId(scope, key);
  }

  @Override
  public String toString() {
    return scope + " " + key;
  }
}

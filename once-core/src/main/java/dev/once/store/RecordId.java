package dev.once.store;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import java.util.Collection;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

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

  /**
   * Checks that a batch names every record at most once, as the batch calls of the SPI require
   * ({@link IdempotencyStore#claimAll}, {@link IdempotencyStore#finishAll}, the batched {@link
   * IdempotencyStore#heartbeat(Collection, java.time.Duration) heartbeat}). Why a store checks it:
   * one multi-row statement answers every copy of a repeated record alike, so two claims for one
   * record in one batch would both be granted, under one token.
   *
   * @param what what the batch holds, for the message ("claims", "finishing writes", "leases")
   * @throws IllegalArgumentException naming the first record that appears twice
   */
  public static <T> void requireDistinct(
      Collection<T> batch, Function<? super T, RecordId> record, String what) {
    if (batch.size() < 2) {
      return;
    }
    Set<RecordId> seen = new HashSet<>(batch.size() * 2);
    for (T item : batch) {
      RecordId id = record.apply(item);
      if (!seen.add(id)) {
        throw new IllegalArgumentException(
            "a batch of " + what + " names " + id + " twice; send those in separate calls");
      }
    }
  }

  @Override
  public String toString() {
    return scope + " " + key;
  }
}

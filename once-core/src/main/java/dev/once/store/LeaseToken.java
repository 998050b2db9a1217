package dev.once.store;

import java.util.Objects;

/**
 * A lease named by its record and its fencing token: what a batched {@link
 * IdempotencyStore#heartbeat(java.util.Collection, java.time.Duration)} extends.
 *
 * @param id the record the lease is on
 * @param token the token the lease was granted with
 */
public record LeaseToken(RecordId id, long token) {

  public LeaseToken {
    Objects.requireNonNull(id, "id");
  }
}

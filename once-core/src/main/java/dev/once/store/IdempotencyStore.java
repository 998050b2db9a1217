package dev.once.store;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The store SPI: a handful of atomic operations over records unique on (scope, key).
 *
 * <p>Every implementation passes the contract kit in {@code once-tck}. The rules, from the design
 * contract:
 * <ul>
 *   <li>{@link #claim} is one atomic store operation. On an absent or expired record it creates an
 *       {@link RecordState#IN_PROGRESS} record with a new token. On an in-progress record whose lease
 *       has ended and whose fingerprint equals the request's, it <em>steals</em>: a new token, the
 *       recovery point kept and handed over. Otherwise it changes nothing and returns the record.
 *   <li>A token is larger for every lease granted on a key and never granted twice for the same
 *       key, not even after a release or an expiry.
 *   <li>{@link #heartbeat}, {@link #checkpoint}, {@link #complete}, {@link #failFinal} and
 *       {@link #release} succeed only while the record is in progress and its stored token equals
 *       the caller's (even if the lease has ended, as long as nobody stole it); they return
 *       {@code false} otherwise and change nothing.
 *   <li>Expired records behave as absent in every operation; {@link #purgeExpired} deletes them.
 *   <li>Time comes from the store's own clock where it has one.
 *   <li>A store that cannot answer throws {@link StoreUnavailableException} within a bounded time.
 * </ul>
 *
 * <p>Byte arrays passed in are not modified, and may be kept by the store without copying: callers
 * must not change them afterwards.
 */
public interface IdempotencyStore extends AutoCloseable {

  /** Claims the record, atomically: a new lease, or the existing record. */
  ClaimResult claim(ClaimRequest request);

  /** Returns the live record, or empty if it is absent or expired. */
  Optional<IdempotencyRecord> get(RecordId id);

  /**
   * Extends the lease to {@code lease} from now. Like {@link #checkpoint}, it also pushes the
   * record's expiry to at least the new lease end, so a long operation never outlives its record.
   */
  boolean heartbeat(RecordId id, long token, Duration lease);

  /** Saves a recovery point that a later thief will be handed, and extends the lease to {@code lease} from now. */
  boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease);

  /** Marks the record {@link RecordState#COMPLETED} with its result; it lives {@code ttl} from now. */
  boolean complete(RecordId id, long token, byte[] result, Duration ttl);

  /** Marks the record {@link RecordState#FAILED_FINAL} with its result; it lives {@code ttl} from now. */
  boolean failFinal(RecordId id, long token, byte[] result, Duration ttl);

  /** Deletes the in-progress record so the key can be claimed afresh. */
  boolean release(RecordId id, long token);

  /**
   * Deletes up to {@code batchSize} expired records and returns how many it deleted. Runs in bounded
   * time and without blocking claims; call it again while it returns {@code batchSize}.
   */
  int purgeExpired(int batchSize);

  /**
   * Returns a future that completes when the record may have changed (a transition or a deletion).
   * It may complete spuriously; callers re-read the record. Stores without change notification
   * return a future that never completes, and callers poll. Cancelling the future unsubscribes.
   * Subscribe before reading the record, so a change between the read and the wait is not missed.
   */
  default CompletableFuture<Void> awaitChange(RecordId id) {
    return new CompletableFuture<>();
  }

  /** Whether {@link #awaitChange} delivers real notifications, so waiters need not poll often. */
  default boolean notifiesChanges() {
    return false;
  }

  /** Releases the store's own resources; never closes a {@code DataSource} or client it was given. */
  @Override
  default void close() {}
}

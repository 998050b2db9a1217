package dev.once.store.jdbc;

import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import java.time.Clock;
import java.time.Instant;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The finished records the embedded store has read, kept in memory so that a replay is answered
 * without waiting for the writer thread (and the disk sync of the batch it would join).
 *
 * <p><b>Exact, not a guess.</b> A record is kept only once a commit covering the read that returned
 * it is durable, and a finished record never changes while it lives: every transition is fenced on
 * an in-progress record, a claim of a live finished record changes nothing, and a purge deletes
 * only expired rows. So until it expires, what the table holds is what is kept here. This holds
 * because the store is the only writer of its file (opened exclusively by one process); a kept
 * record is answered only while it is live by the store's own clock, as the statements compare it,
 * and after that the writer decides.
 *
 * <p>Bounded by the bytes of the results it keeps: past the bound it forgets records, in no
 * particular order, and a forgotten record is read again through the writer.
 */
final class FinishedRecords {

  /** What a kept record costs besides its result: the record, its key and the map's entry. */
  private static final int RECORD_OVERHEAD = 256;

  private final Clock clock;
  private final long maxBytes;
  private final ConcurrentHashMap<RecordId, IdempotencyRecord> byId = new ConcurrentHashMap<>();
  private final AtomicLong bytes = new AtomicLong();
  private final ReentrantLock trimming = new ReentrantLock();

  /** Set once the store closes: nothing is answered or kept after that. */
  private volatile boolean closed;

  FinishedRecords(Clock clock, long maxBytes) {
    this.clock = clock;
    this.maxBytes = maxBytes;
  }

  /** The kept record of {@code id} as the store's clock sees it now, or null if none is live. */
  @Nullable IdempotencyRecord get(RecordId id) {
    IdempotencyRecord kept = byId.get(id);
    if (kept == null || closed) {
      return null;
    }
    Instant now = SqliteDialect.instant(SqliteDialect.micros(clock.instant()));
    if (!kept.expiresAt().isAfter(now)) {
      forget(id, kept);
      return null;
    }
    return new IdempotencyRecord(
        kept.id(),
        kept.state(),
        kept.fingerprint(),
        kept.token(),
        kept.leaseUntil(),
        kept.expiresAt(),
        kept.recoveryPoint(),
        kept.result(),
        now,
        kept.createdAt());
  }

  /** Keeps the record a durable claim answered with, if it is finished; returns the answer. */
  ClaimResult keep(ClaimResult answer) {
    if (answer instanceof ClaimResult.Existing existing) {
      keep(existing.record());
    }
    return answer;
  }

  /** Keeps the record a durable read answered with, if it is finished; returns the answer. */
  Optional<IdempotencyRecord> keep(Optional<IdempotencyRecord> answer) {
    answer.ifPresent(this::keep);
    return answer;
  }

  private void keep(IdempotencyRecord record) {
    byte[] result = record.result();
    if (!record.state().isTerminal() || result == null || closed) {
      return;
    }
    long size = cost(record);
    if (size > maxBytes / 4) {
      return; // one large result would push out many small ones
    }
    if (byId.put(record.id(), record) == null) {
      bytes.addAndGet(size);
    }
    if (bytes.get() > maxBytes) {
      trim();
    }
  }

  private void forget(RecordId id, IdempotencyRecord kept) {
    if (byId.remove(id, kept)) {
      bytes.addAndGet(-cost(kept));
    }
  }

  /** Forgets records until a tenth of the bound is free; one thread trims, the others go on. */
  private void trim() {
    if (!trimming.tryLock()) {
      return;
    }
    try {
      Iterator<IdempotencyRecord> it = byId.values().iterator();
      while (bytes.get() > maxBytes - maxBytes / 10 && it.hasNext()) {
        IdempotencyRecord kept = it.next();
        forget(kept.id(), kept);
      }
    } finally {
      trimming.unlock();
    }
  }

  /**
   * Forgets every record for good (the store is closing): a closed store answers nothing, not even
   * a replay it could.
   */
  void close() {
    closed = true;
    byId.clear();
    bytes.set(0);
  }

  private static long cost(IdempotencyRecord record) {
    byte[] result = record.result();
    return RECORD_OVERHEAD + (result == null ? 0 : result.length);
  }
}

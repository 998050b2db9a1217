package dev.once.store;

import dev.once.internal.Arguments;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * An {@link IdempotencyStore} in this JVM's memory: for tests, single-instance services and as the
 * reference every other store is compared with. Nothing survives a restart, and nothing is shared
 * between processes.
 *
 * <p>Every transition is one {@link ConcurrentHashMap#compute} on the record, so operations on
 * different keys never wait for each other and reads of finished records take no lock. Tokens come
 * from one store-wide counter, so a token is never granted twice, not even after a release or an
 * expiry. Time comes from the configured {@link Clock}.
 *
 * <p>The store holds at most {@link Builder#maxRecords(int) maxRecords} records. When it is full, a
 * claim for a new key first purges expired records; if none has expired it throws {@link
 * StoreFullException}. A live record is never evicted to make room, because someone may be relying
 * on it to stop a duplicate. Expired records otherwise stay in memory until a claim on the same key
 * replaces them or {@link #purgeExpired(int)} deletes them, so long-running services call it
 * periodically.
 *
 * <pre>{@code
 * IdempotencyStore store = InMemoryStore.builder()
 *     .maxRecords(100_000)
 *     .build();
 * }</pre>
 */
public final class InMemoryStore implements IdempotencyStore {

  /**
   * The default of {@link Builder#maxRecords(int)}: enough for tests and small services, and a
   * bound on memory.
   */
  public static final int DEFAULT_MAX_RECORDS = 1_000_000;

  private final ConcurrentHashMap<RecordId, StoredRecord> records = new ConcurrentHashMap<>();
  private final AtomicLong lastToken = new AtomicLong();
  // Entries in the map, expired ones included; only changed inside a compute that adds or removes
  // one.
  private final AtomicInteger size = new AtomicInteger();
  private final AtomicBoolean makingRoom = new AtomicBoolean();
  private final ChangeWaiters waiters = new ChangeWaiters();
  private final Clock clock;
  private final int maxRecords;

  private InMemoryStore(Builder builder) {
    this.clock = builder.clock;
    this.maxRecords = builder.maxRecords;
  }

  /**
   * Returns a store with the defaults: the system UTC clock and {@value #DEFAULT_MAX_RECORDS}
   * records at most.
   */
  public static InMemoryStore create() {
    return builder().build();
  }

  /** Returns a builder; every option has a default. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    ClaimResult fast = existingTerminal(request.id());
    if (fast != null) {
      return fast;
    }
    ClaimResult result = tryClaim(request);
    if (result == null) {
      makeRoom();
      result = tryClaim(request);
      if (result == null) {
        throw new StoreFullException(
            "the in-memory store holds its maximum of "
                + maxRecords
                + " records (maxRecords) and none has expired; live records are never evicted");
      }
    }
    if (result instanceof Claimed) {
      waiters.changed(request.id());
    }
    return result;
  }

  /**
   * The lock-free path for the most common claim of all, a retry of finished work. A terminal
   * record changes only by expiring, so if it is still live when the clock is read after the map,
   * it was there unchanged at that instant.
   */
  private @Nullable ClaimResult existingTerminal(RecordId id) {
    StoredRecord current = records.get(id);
    if (current == null || !current.state().isTerminal()) {
      return null;
    }
    Instant now = clock.instant();
    return current.isExpiredAt(now) ? null : new Existing(current.toRecord(id, now));
  }

  /** Returns the claim's result, or {@code null} if the key is new and the store is full. */
  private @Nullable ClaimResult tryClaim(ClaimRequest request) {
    ClaimResult[] result = new ClaimResult[1];
    records.compute(
        request.id(),
        (id, current) -> {
          Instant now = clock.instant();
          if (current == null) {
            if (!reserveRoom()) {
              return null;
            }
            return grant(request, now, null, result);
          }
          if (current.isExpiredAt(now)) {
            // Expired is absent: a fresh claim, not a steal, so the old recovery point is not
            // handed on.
            return grant(request, now, null, result);
          }
          if (current.isStealableAt(now, request.fingerprint())) {
            return grant(request, now, current, result);
          }
          result[0] = new Existing(current.toRecord(id, now));
          return current;
        });
    return result[0];
  }

  /**
   * Grants a new lease. {@code stolenFrom} is the record taken over, or {@code null} for a fresh
   * claim; a steal never shortens the record's life, and keeps its recovery point and creation
   * time.
   */
  private StoredRecord grant(
      ClaimRequest request, Instant now, @Nullable StoredRecord stolenFrom, ClaimResult[] result) {
    long token = lastToken.incrementAndGet();
    Instant leaseUntil = plus(now, request.lease());
    Instant expiresAt = StoredRecord.later(plus(now, request.ttl()), leaseUntil);
    byte[] recoveryPoint = null;
    Instant createdAt = now;
    if (stolenFrom != null) {
      expiresAt = StoredRecord.later(expiresAt, stolenFrom.expiresAt());
      recoveryPoint = stolenFrom.recoveryPoint();
      createdAt = stolenFrom.createdAt();
    }
    result[0] = new Claimed(token, leaseUntil, stolenFrom != null, recoveryPoint);
    return new StoredRecord(
        RecordState.IN_PROGRESS,
        request.fingerprint(),
        token,
        leaseUntil,
        expiresAt,
        recoveryPoint,
        null,
        createdAt);
  }

  private boolean reserveRoom() {
    int n;
    do {
      n = size.get();
      if (n >= maxRecords) {
        return false;
      }
    } while (!size.compareAndSet(n, n + 1));
    return true;
  }

  /**
   * Purges expired records so a new key fits. One thread scans at a time: when the store is full of
   * live records, every refused claim would otherwise pay for a full scan.
   */
  private void makeRoom() {
    if (makingRoom.compareAndSet(false, true)) {
      try {
        purgeExpired(Integer.MAX_VALUE);
      } finally {
        makingRoom.set(false);
      }
    }
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    Objects.requireNonNull(id, "id");
    StoredRecord current = records.get(id);
    if (current != null && current.state().isTerminal()) {
      Instant now = clock.instant();
      if (!current.isExpiredAt(now)) {
        return Optional.of(current.toRecord(id, now));
      }
    }
    // Anything else is read together with the clock under the record's lock, so the snapshot shows
    // one instant: an in-progress record can change between two lock-free reads, and a lock-free
    // miss would overlook a claim that has read the clock but not yet published its record (found
    // by Lincheck). On a key nobody is touching this takes no lock.
    IdempotencyRecord[] found = new IdempotencyRecord[1];
    records.computeIfPresent(
        id,
        (k, stored) -> {
          Instant now = clock.instant();
          if (!stored.isExpiredAt(now)) {
            found[0] = stored.toRecord(k, now);
          }
          return stored;
        });
    return Optional.ofNullable(found[0]);
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    Arguments.positive("lease", lease);
    return transition(
        id,
        token,
        false,
        (stored, now) -> stored.withLease(plus(now, lease), stored.recoveryPoint()));
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    Objects.requireNonNull(recoveryPoint, "recoveryPoint");
    Arguments.positive("lease", lease);
    return transition(
        id, token, false, (stored, now) -> stored.withLease(plus(now, lease), recoveryPoint));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return finish(id, token, RecordState.COMPLETED, result, ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return finish(id, token, RecordState.FAILED_FINAL, result, ttl);
  }

  private boolean finish(RecordId id, long token, RecordState state, byte[] result, Duration ttl) {
    Objects.requireNonNull(result, "result");
    Arguments.positive("ttl", ttl);
    return transition(
        id, token, true, (stored, now) -> stored.terminal(state, result, now, plus(now, ttl)));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return transition(id, token, true, (stored, now) -> null);
  }

  @Override
  public boolean endLease(RecordId id, long token) {
    return transition(id, token, true, (stored, now) -> stored.withLeaseEndedAt(now));
  }

  /**
   * A change made by the holder of {@code token}; {@code change} returns {@code null} to delete the
   * record.
   */
  private boolean transition(RecordId id, long token, boolean wakesWaiters, Change change) {
    Objects.requireNonNull(id, "id");
    boolean[] done = {false};
    records.computeIfPresent(
        id,
        (k, stored) -> {
          Instant now = clock.instant();
          if (!stored.isHeldAt(now, token)) {
            return stored;
          }
          done[0] = true;
          StoredRecord next = change.apply(stored, now);
          if (next == null) {
            size.decrementAndGet();
          }
          return next;
        });
    if (done[0] && wakesWaiters) {
      waiters.changed(id);
    }
    return done[0];
  }

  // In memory nothing waits for I/O, so the asynchronous calls run on the caller's thread.

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return Stages.now(() -> claim(request));
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return Stages.now(() -> get(id));
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return Stages.now(() -> complete(id, token, result, ttl));
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return Stages.now(() -> failFinal(id, token, result, ttl));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return Stages.now(() -> release(id, token));
  }

  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return Stages.now(() -> endLease(id, token));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: one pass over at most {@value #IN_FLIGHT_SCAN_BUDGET} entries, in the map's order (no
   * order by age), keeping the oldest matches in a bounded heap; a store holding more entries than
   * that answers incomplete.
   */
  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    InFlight.check(olderThan, limit);
    Instant now = clock.instant();
    Instant cutoff = now.minus(olderThan);
    Comparator<IdempotencyRecord> oldestFirst = InFlight.OLDEST_FIRST;
    PriorityQueue<IdempotencyRecord> youngestOnTop = new PriorityQueue<>(oldestFirst.reversed());
    int scanned = 0;
    Iterator<java.util.Map.Entry<RecordId, StoredRecord>> entries = records.entrySet().iterator();
    while (entries.hasNext()) {
      if (scanned++ == IN_FLIGHT_SCAN_BUDGET) {
        return new InFlight(sorted(youngestOnTop, oldestFirst), false);
      }
      java.util.Map.Entry<RecordId, StoredRecord> e = entries.next();
      StoredRecord r = e.getValue();
      if (r.state() != RecordState.IN_PROGRESS
          || r.isExpiredAt(now)
          || r.createdAt().isAfter(cutoff)) {
        continue;
      }
      youngestOnTop.add(
          new IdempotencyRecord(
              e.getKey(),
              r.state(),
              r.fingerprint(),
              r.token(),
              r.leaseUntil(),
              r.expiresAt(),
              r.recoveryPoint() == null ? null : NO_BYTES,
              null,
              now,
              r.createdAt()));
      if (youngestOnTop.size() > limit) {
        youngestOnTop.poll();
      }
    }
    return new InFlight(sorted(youngestOnTop, oldestFirst), true);
  }

  /** Entries {@link #inFlight} looks at per call: bounded work however large the store. */
  static final int IN_FLIGHT_SCAN_BUDGET = 100_000;

  private static final byte[] NO_BYTES = new byte[0];

  private static List<IdempotencyRecord> sorted(
      PriorityQueue<IdempotencyRecord> found, Comparator<IdempotencyRecord> order) {
    List<IdempotencyRecord> out = new ArrayList<>(found);
    out.sort(order);
    return out;
  }

  @Override
  public int purgeExpired(int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, was " + batchSize);
    }
    // Records that expire while the scan runs wait for the next call; the scan never blocks claims.
    Instant now = clock.instant();
    return remove(stored -> stored.isExpiredAt(now), batchSize);
  }

  /**
   * Forgets every record, live or finished, as if the store were new: for tests that share one
   * store (a Spring application context, say) and start each with no keys. The token counter keeps
   * counting, so no token is ever granted twice; a holder of a forgotten lease learns that it lost
   * it at its next write. Waiters are woken.
   */
  public void clear() {
    remove(stored -> true, Integer.MAX_VALUE);
  }

  /** Removes up to {@code most} records that {@code which} accepts, each in its own compute. */
  private int remove(java.util.function.Predicate<StoredRecord> which, int most) {
    int removedCount = 0;
    Iterator<RecordId> ids = records.keySet().iterator();
    while (removedCount < most && ids.hasNext()) {
      RecordId id = ids.next();
      boolean[] removed = {false};
      records.computeIfPresent(
          id,
          (k, stored) -> {
            if (!which.test(stored)) {
              return stored;
            }
            removed[0] = true;
            size.decrementAndGet();
            return null;
          });
      if (removed[0]) {
        removedCount++;
        waiters.changed(id);
      }
    }
    return removedCount;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Claims, completions, final failures, releases and purges wake waiters; heartbeats and
   * checkpoints do not. Dependent actions run on the thread that made the change unless the waiter
   * chains them asynchronously.
   */
  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    Objects.requireNonNull(id, "id");
    return waiters.subscribe(id);
  }

  @Override
  public boolean notifiesChanges() {
    return true;
  }

  /**
   * Wakes every waiter, so nobody waits on a store that is going away. The records stay readable.
   */
  @Override
  public void close() {
    waiters.wakeAll();
  }

  @Override
  public String toString() {
    return "InMemoryStore[records="
        + size.get()
        + ", maxRecords="
        + maxRecords
        + ", clock="
        + clock
        + "]";
  }

  /** Records held, expired ones not yet purged included. */
  int recordCount() {
    return size.get();
  }

  /** Waits not yet woken, cancelled or otherwise ended. */
  int waiterCount() {
    return waiters.count();
  }

  /**
   * Adds without overflowing: a huge TTL means "never", not an exception in the middle of a claim.
   */
  private static Instant plus(Instant now, Duration d) {
    try {
      return now.plus(d);
    } catch (DateTimeException | ArithmeticException e) {
      return Instant.MAX;
    }
  }

  @FunctionalInterface
  private interface Change {
    @Nullable StoredRecord apply(StoredRecord stored, Instant now);
  }

  /**
   * Configures an {@link InMemoryStore}. Each setter rejects a bad value at once with an {@link
   * IllegalArgumentException} that names the option.
   */
  public static final class Builder {

    private Clock clock = Clock.systemUTC();
    private int maxRecords = DEFAULT_MAX_RECORDS;

    private Builder() {}

    /** The clock leases and expiry are measured by; default {@link Clock#systemUTC()}. */
    public Builder clock(Clock clock) {
      this.clock = Arguments.present("clock", clock);
      return this;
    }

    /**
     * The most records the store holds, expired ones not yet purged included; default {@value
     * InMemoryStore#DEFAULT_MAX_RECORDS}. At the limit a claim for a new key purges expired
     * records, then throws {@link StoreFullException} if none had expired.
     */
    public Builder maxRecords(int maxRecords) {
      if (maxRecords < 1) {
        throw new IllegalArgumentException("maxRecords must be at least 1, was " + maxRecords);
      }
      this.maxRecords = maxRecords;
      return this;
    }

    public InMemoryStore build() {
      return new InMemoryStore(this);
    }
  }
}

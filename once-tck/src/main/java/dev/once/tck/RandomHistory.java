package dev.once.tck;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.tck.HistoryEvent.Kind;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Consumer;

/**
 * Runs random operations from many threads over a few shared keys and records what each returned,
 * for {@link HistoryChecker}. Each worker draws its operations from its own seeded random, so a
 * seed reproduces the operations (though not their interleaving).
 *
 * <p>Workers mostly present the token they were granted, sometimes one granted to someone else, so
 * fencing is exercised; claims mostly present the key's fingerprint, sometimes another one. A key
 * that reaches a terminal state is retired and its slot moves on to a fresh key, so the run keeps
 * contending instead of replaying one finished record. All leases have the same length, so a lease
 * end observed anywhere is a lower bound of that lease's final end.
 */
final class RandomHistory {

  /** Long enough that nothing expires during a run: every disappearance is a release. */
  static final Duration TTL = Duration.ofHours(1);

  private final IdempotencyStore store;
  private final Consumer<Duration> advanceTime;
  private final Duration lease;
  private final int threads;
  private final int opsPerThread;
  private final int keys;
  private final long seed;
  private final long deadlineNanos;
  private final String run = Samples.unique();
  private final Scope scope = Scope.of("once-tck", "history", run);
  private final AtomicIntegerArray generations;
  private final List<Long> grantedTokens = new ArrayList<>();

  RandomHistory(
      IdempotencyStore store,
      Consumer<Duration> advanceTime,
      Duration lease,
      int threads,
      int opsPerThread,
      int keys,
      long seed,
      Duration budget) {
    this.store = store;
    this.advanceTime = advanceTime;
    this.lease = lease;
    this.threads = threads;
    this.opsPerThread = opsPerThread;
    this.keys = keys;
    this.seed = seed;
    this.deadlineNanos = System.nanoTime() + budget.toNanos();
    this.generations = new AtomicIntegerArray(keys);
  }

  List<HistoryEvent> run() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<List<HistoryEvent>>> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        Callable<List<HistoryEvent>> worker =
            () -> {
              start.await();
              return work(thread);
            };
        workers.add(pool.submit(worker));
      }
      start.countDown();
      List<HistoryEvent> history = new ArrayList<>();
      for (Future<List<HistoryEvent>> worker : workers) {
        history.addAll(
            worker.get(
                Math.max(1, deadlineNanos - System.nanoTime()) + TimeUnit.SECONDS.toNanos(30),
                TimeUnit.NANOSECONDS));
      }
      return history;
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private List<HistoryEvent> work(int thread) {
    Random random = new Random(seed * 1_000_003L + thread);
    Map<RecordId, Long> held = new HashMap<>();
    List<HistoryEvent> events = new ArrayList<>(opsPerThread);
    for (int seq = 0; seq < opsPerThread && System.nanoTime() < deadlineNanos; seq++) {
      int slot = random.nextInt(keys);
      int generation = generations.get(slot);
      RecordId id = idOf(slot, generation);
      int dice = random.nextInt(100);
      long started = System.nanoTime();
      if (dice < 25) {
        Fingerprint fingerprint =
            random.nextInt(100) < 5 ? otherFingerprintOf(id) : fingerprintOf(id);
        ClaimResult result = store.claim(new ClaimRequest(id, fingerprint, lease, TTL));
        HistoryEvent event =
            HistoryEvent.ofClaim(thread, seq, id, fingerprint, started, System.nanoTime(), result);
        events.add(event);
        if (result instanceof Claimed claimed) {
          held.put(id, claimed.token());
          synchronized (grantedTokens) {
            grantedTokens.add(claimed.token());
          }
        } else if (((Existing) result).record().state().isTerminal()) {
          retire(slot, generation);
        }
      } else if (dice < 72) {
        write(thread, seq, id, writeOf(dice), tokenFor(id, held, random), started, events);
        HistoryEvent event = events.get(events.size() - 1);
        if (event.succeeded() && event.isFinishingWrite()) {
          held.remove(id);
          if (event.kind() != Kind.RELEASE) {
            retire(slot, generation);
          }
        }
      } else if (dice < 94) {
        IdempotencyRecord seen = store.get(id).orElse(null);
        events.add(
            new HistoryEvent(
                thread,
                seq,
                Kind.GET,
                id,
                Long.MIN_VALUE,
                null,
                null,
                started,
                System.nanoTime(),
                seen != null,
                null,
                seen));
        if (seen != null && seen.state().isTerminal()) {
          retire(slot, generation);
        }
      } else {
        // Let some leases end, so that steals, zombies and recovery points happen.
        advanceTime.accept(lease.dividedBy(4));
      }
    }
    return events;
  }

  private static Kind writeOf(int dice) {
    // Outcomes are rare enough that a key lives through several leases, steals and zombies first.
    if (dice < 32) {
      return Kind.COMPLETE;
    } else if (dice < 35) {
      return Kind.FAIL_FINAL;
    } else if (dice < 44) {
      return Kind.RELEASE;
    } else if (dice < 58) {
      return Kind.HEARTBEAT;
    }
    return Kind.CHECKPOINT;
  }

  private void write(
      int thread,
      int seq,
      RecordId id,
      Kind kind,
      long token,
      long started,
      List<HistoryEvent> events) {
    // Unique bytes, so a result or recovery point seen anywhere names the one write that stored it.
    byte[] bytes = (kind + " " + thread + ":" + seq).getBytes(StandardCharsets.UTF_8);
    boolean ok =
        switch (kind) {
          case COMPLETE -> store.complete(id, token, bytes, TTL);
          case FAIL_FINAL -> store.failFinal(id, token, bytes, TTL);
          case RELEASE -> store.release(id, token);
          case HEARTBEAT -> store.heartbeat(id, token, lease);
          case CHECKPOINT -> store.checkpoint(id, token, bytes, lease);
          default -> throw new IllegalArgumentException(kind + " is not a write");
        };
    boolean carriesBytes =
        kind == Kind.COMPLETE || kind == Kind.FAIL_FINAL || kind == Kind.CHECKPOINT;
    events.add(
        new HistoryEvent(
            thread,
            seq,
            kind,
            id,
            token,
            null,
            carriesBytes ? bytes : null,
            started,
            System.nanoTime(),
            ok,
            null,
            null));
  }

  /**
   * Mostly the token this worker holds; otherwise one granted to anyone, which is usually stale.
   */
  private long tokenFor(RecordId id, Map<RecordId, Long> held, Random random) {
    Long mine = held.get(id);
    if (mine != null && random.nextInt(100) < 85) {
      return mine;
    }
    synchronized (grantedTokens) {
      return grantedTokens.isEmpty() ? 1 : grantedTokens.get(random.nextInt(grantedTokens.size()));
    }
  }

  private void retire(int slot, int generation) {
    generations.compareAndSet(slot, generation, generation + 1);
  }

  private RecordId idOf(int slot, int generation) {
    return RecordId.of(scope, IdempotencyKey.of("slot-" + slot + "-gen-" + generation));
  }

  private static Fingerprint fingerprintOf(RecordId id) {
    return new Fingerprint(1, hexOf(id));
  }

  private static Fingerprint otherFingerprintOf(RecordId id) {
    return new Fingerprint(2, hexOf(id));
  }

  private static String hexOf(RecordId id) {
    return String.format(
        "%016x%016x",
        id.key().value().hashCode() & 0xffffffffL, id.scope().value().hashCode() & 0xffffffffL);
  }
}

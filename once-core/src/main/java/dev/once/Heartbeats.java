package dev.once;

import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every lease an engine holds alive, with as few store calls as the work allows.
 *
 * <p>Why batches: one blocking heartbeat call per lease makes the capacity of a heartbeat thread
 * {@code period / latency} leases — about 330 at a 30 s lease and a 30 ms store — and beyond that
 * live leases lapse and retries steal them from holders that are still running. Here the leases
 * with the same lease length form a cohort; a tick per cohort, every third of the lease, gathers
 * the cohort's leases that are due and splits them into batches, each extended with one {@link
 * IdempotencyStore#heartbeatAsync} call: on a blocking store a thread of a small pool of beaters
 * makes it, while a store whose client is asynchronous takes it with no thread waiting at all.
 * 10,000 leases on a store answering in 50 ms cost four calls of 2,500 a tick, made at once: about
 * one round trip.
 *
 * <p>A lease is in at most one batch at a time: while its beat is under way (a slow store), later
 * ticks skip it instead of piling calls onto the store. Each lease keeps its local deadline (see
 * {@link HeldLease#leaseLost()}): a batch moves it to the batch's send time plus the lease, and a
 * tick that finds it passed takes the lease out of the cohort, for the holder can no longer count
 * on it.
 */
final class Heartbeats implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Heartbeats.class);
  private static final int MIN_SPLIT = 64;

  private final IdempotencyStore store;
  private final ScheduledExecutorService ticker;
  private final boolean ownsTicker;
  private final ThreadPoolExecutor beaters;
  private final int threads;
  private final int batchSize;
  private final Map<Duration, Cohort> cohorts = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * @param ticker runs the ticks, or null for a daemon thread of the engine's own
   * @param threads how many batches may be in the store at once
   * @param batchSize the most leases one store call extends
   */
  Heartbeats(
      IdempotencyStore store,
      @Nullable ScheduledExecutorService ticker,
      int threads,
      int batchSize) {
    this.store = store;
    this.ownsTicker = ticker == null;
    this.ticker = ticker == null ? newTicker() : ticker;
    this.threads = threads;
    this.batchSize = batchSize;
    this.beaters = newBeaters(threads);
  }

  /**
   * Whether leases can be kept alive: false once closed, or once a caller's ticker was shut down.
   */
  boolean running() {
    return !closed && !ticker.isShutdown();
  }

  /**
   * Starts keeping the lease alive.
   *
   * @throws IllegalStateException if the heartbeats are no longer {@link #running()}
   */
  void register(HeldLease lease) {
    Cohort cohort;
    try {
      cohort = cohorts.computeIfAbsent(lease.leaseLength(), this::startCohort);
    } catch (RejectedExecutionException e) {
      throw new IllegalStateException("the heartbeat scheduler was shut down", e);
    }
    cohort.leases.add(lease);
    if (!running()) {
      cohort.leases.remove(lease);
      throw new IllegalStateException("the engine was closed");
    }
  }

  /** Stops keeping the lease alive; a beat already under way for it may still finish. */
  void unregister(HeldLease lease) {
    Cohort cohort = cohorts.get(lease.leaseLength());
    if (cohort != null) {
      cohort.leases.remove(lease);
    }
  }

  /** How many leases are kept alive now. */
  int size() {
    int n = 0;
    for (Cohort cohort : cohorts.values()) {
      n += cohort.leases.size();
    }
    return n;
  }

  private Cohort startCohort(Duration lease) {
    if (!running()) {
      throw new RejectedExecutionException("closed");
    }
    Cohort cohort = new Cohort(lease);
    cohort.tick =
        ticker.scheduleAtFixedRate(
            () -> tick(cohort), cohort.periodNanos, cohort.periodNanos, TimeUnit.NANOSECONDS);
    return cohort;
  }

  private void tick(Cohort cohort) {
    try {
      long now = System.nanoTime();
      List<HeldLease> due = new ArrayList<>();
      // A batch names each record once (the SPI refuses it otherwise): two leases on one record
      // (a zombie and its thief, both in this process) beat in different ticks.
      Set<RecordId> records = new HashSet<>();
      for (HeldLease lease : cohort.leases) {
        if (lease.deadlinePassed(now)) {
          cohort.leases.remove(lease);
          lease.lapsedLocally();
        } else if (lease.dueForBeat(now, cohort.periodNanos / 4)
            && !records.contains(lease.leaseToken().id())
            && lease.startBeat()) {
          records.add(lease.leaseToken().id());
          due.add(lease);
        }
      }
      int size = batchSizeFor(due.size());
      for (int from = 0; from < due.size(); from += size) {
        submit(cohort, List.copyOf(due.subList(from, Math.min(due.size(), from + size))));
      }
    } catch (RuntimeException e) {
      // A tick that throws is never run again by the scheduler: keep ticking whatever happened.
      log.warn("heartbeat tick failed", e);
    }
  }

  /**
   * Spreads the due leases over every beater, so a tick costs about one store round trip rather
   * than one per {@code batchSize} leases in turn; but never splits below {@value #MIN_SPLIT}
   * leases a call, nor puts more than {@code batchSize} in one.
   */
  private int batchSizeFor(int due) {
    int batches = Math.max(ceilDiv(due, batchSize), Math.min(threads, ceilDiv(due, MIN_SPLIT)));
    return Math.max(1, ceilDiv(due, Math.max(1, batches)));
  }

  private static int ceilDiv(int a, int b) {
    return (a + b - 1) / b;
  }

  /**
   * Extends one batch with one {@link IdempotencyStore#heartbeatAsync} call. A store whose client
   * is asynchronous (Redis) is called from the tick and answers on its own thread: no thread waits,
   * however many batches are out. A blocking one runs on a beater, as its default does.
   */
  private void submit(Cohort cohort, List<HeldLease> batch) {
    List<LeaseToken> tokens = new ArrayList<>(batch.size());
    for (HeldLease lease : batch) {
      tokens.add(lease.leaseToken());
    }
    long sent = System.nanoTime();
    CompletionStage<Set<LeaseToken>> beat;
    try {
      beat = store.heartbeatAsync(tokens, cohort.lease, beaters);
    } catch (RuntimeException e) {
      beaten(cohort, batch, sent, null, e);
      return;
    }
    beat.whenComplete((extended, failure) -> beaten(cohort, batch, sent, extended, failure));
  }

  private void beaten(
      Cohort cohort,
      List<HeldLease> batch,
      long sent,
      @Nullable Set<LeaseToken> extended,
      @Nullable Throwable failure) {
    try {
      if (extended != null) {
        for (HeldLease lease : batch) {
          if (extended.contains(lease.leaseToken())) {
            lease.extendedAt(sent);
          } else {
            cohort.leases.remove(lease);
            lease.refused();
          }
        }
      } else {
        Throwable cause =
            failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause()
                : failure;
        if (cause instanceof StoreUnavailableException) {
          // Keep beating: the leases may still be ours when the store comes back; their local
          // deadlines, not this failure, decide when they are lost.
          log.debug("heartbeat of {} leases failed: {}", batch.size(), cause.toString());
        } else {
          log.warn("heartbeat of {} leases failed unexpectedly", batch.size(), cause);
        }
      }
    } finally {
      batch.forEach(HeldLease::endBeat);
    }
  }

  /** Stops every tick and beat; leases still held are no longer extended. */
  @Override
  public void close() {
    closed = true;
    for (Cohort cohort : cohorts.values()) {
      ScheduledFuture<?> tick = cohort.tick;
      if (tick != null) {
        tick.cancel(false);
      }
    }
    if (ownsTicker) {
      ticker.shutdownNow();
    }
    beaters.shutdownNow();
  }

  /** The leases of one length, ticked every third of it. */
  private static final class Cohort {
    final Duration lease;
    final long periodNanos;
    final Set<HeldLease> leases = ConcurrentHashMap.newKeySet();
    volatile @Nullable ScheduledFuture<?> tick;

    Cohort(Duration lease) {
      this.lease = lease;
      // A third of the lease, so two missed beats still leave time for a third.
      this.periodNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), lease.toNanos() / 3);
    }
  }

  private static ScheduledExecutorService newTicker() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(1, daemon("once-heartbeat-tick"));
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  private static ThreadPoolExecutor newBeaters(int threads) {
    // Unbounded queue, yet bounded in practice: a lease is in at most one queued or running batch.
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            daemon("once-heartbeat-"));
    executor.allowCoreThreadTimeOut(true);
    return executor;
  }

  private static java.util.concurrent.ThreadFactory daemon(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix.endsWith("-") ? prefix + count.incrementAndGet() : prefix);
      t.setDaemon(true);
      return t;
    };
  }
}

package dev.once.outbox;

import dev.once.internal.Arguments;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends an outbox's messages: claims a batch of due rows, starts every send, waits for the answers,
 * and records each outcome (delivered, retry after a backoff, dead).
 *
 * <pre>{@code
 * OutboxRelay relay = outbox.relay(HttpDelivery.create())
 *     .batchSize(100)
 *     .maxAttempts(10)
 *     .build();
 * relay.start();   // worker threads of its own; close() stops them
 * }</pre>
 *
 * <p><b>Claims are leases, not held locks.</b> A claim is one short transaction: {@code SELECT …
 * FOR UPDATE SKIP LOCKED} picks due rows that no concurrent claim holds, and the same transaction
 * moves their {@code available_at} one lease ahead and counts the attempt. The sends happen after
 * that commit, with no transaction open and no connection held; the outcome is recorded in a second
 * short transaction, fenced by the attempt number. So several relays never send one row
 * concurrently (the row stays hidden while its lease runs, and every send is bounded by {@code
 * deliveryTimeout}, which must be shorter than the lease), and a relay that dies mid-batch leaves
 * its rows to be claimed again when the lease ends: delivery is at least once, and the derived
 * {@code Idempotency-Key} lets the downstream apply each message once. Holding the row locks
 * through the sends would have needed a connection and an open transaction per relay for as long as
 * the slowest destination takes, would have held back vacuum, and a connection lost while a send
 * was in flight would have released the lock to a second relay anyway.
 *
 * <p>Threads: {@link Builder#workers(int)} loops of its own, each with at most one batch in flight;
 * the delivery's threads are the delivery's. A relay does not close its delivery.
 */
public final class OutboxRelay implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(OutboxRelay.class);
  private static final int MAX_PURGE_BATCHES_PER_RUN = 100;

  private final Outbox outbox;
  private final Delivery delivery;
  private final int batchSize;
  private final int workers;
  private final Duration pollInterval;
  private final Duration lease;
  private final Duration deliveryTimeout;
  private final int maxAttempts;
  private final Backoff backoff;
  private final boolean purge;
  private final Duration retention;
  private final Duration purgeInterval;
  private final int purgeBatchSize;
  private final RelayListener listener;
  private final String threadName;

  private final AtomicBoolean started = new AtomicBoolean();
  private final CountDownLatch stopping = new CountDownLatch(1);
  private final List<Thread> threads = new ArrayList<>();
  private long lastPurgeNanos;

  private OutboxRelay(Builder b) {
    this.outbox = b.outbox;
    this.delivery = b.delivery;
    this.batchSize = b.batchSize;
    this.workers = b.workers;
    this.pollInterval = b.pollInterval;
    this.lease = b.lease;
    this.deliveryTimeout = b.deliveryTimeout;
    this.maxAttempts = b.maxAttempts;
    this.backoff = b.backoff;
    this.purge = b.purge;
    this.retention = b.retention;
    this.purgeInterval = b.purgeInterval;
    this.purgeBatchSize = b.purgeBatchSize;
    this.listener = b.listener;
    this.threadName = b.threadName;
  }

  /**
   * Starts the worker threads.
   *
   * @throws IllegalStateException if started before
   */
  public void start() {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("relay was started before; build a new one");
    }
    lastPurgeNanos = System.nanoTime() - purgeInterval.toNanos();
    synchronized (threads) {
      for (int i = 0; i < workers; i++) {
        int index = i;
        Thread t = new Thread(() -> work(index), threadName + "-" + i);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
    }
  }

  /**
   * Claims, sends and records one batch on the calling thread; for callers that schedule the relay
   * themselves (and tests). Safe to run beside started workers and other relays.
   *
   * @return how many due rows were claimed, 0 if none was due
   * @throws dev.once.store.StoreUnavailableException if the claim or the recording fails; rows
   *     claimed stay hidden until their lease ends and are then claimed again
   */
  public int runOnce() {
    OutboxTable table = outbox.table;
    OutboxTable.Claim claim;
    try {
      claim = table.claim(outbox.dataSource, batchSize, Outbox.micros(lease), maxAttempts);
    } catch (SQLException e) {
      throw outbox.unavailable("claim", e);
    }
    for (ClaimedRow row : claim.exhausted()) {
      LOG.warn(
          "outbox message {} is dead: its last attempt ended without an outcome",
          row.pending().message().id());
      listener.onDead(row.pending(), "the lease of the last attempt ended without an outcome");
    }
    List<ClaimedRow> due = claim.due();
    if (due.isEmpty()) {
      return claim.exhausted().size();
    }
    listener.onClaimed(due.size());
    List<OutboxTable.Result> results = send(due);
    if (!results.isEmpty()) {
      List<ClaimedRow> lost;
      try {
        lost = table.record(outbox.dataSource, results);
      } catch (SQLException e) {
        throw outbox.unavailable("recording outcomes", e);
      }
      for (ClaimedRow row : lost) {
        LOG.debug(
            "outbox message {}: claim lost before the outcome was recorded",
            row.pending().message().id());
        listener.onLeaseLost(row.pending());
      }
    }
    return due.size() + claim.exhausted().size();
  }

  /**
   * Starts every send, waits for them up to {@code deliveryTimeout}, and turns answers into
   * results.
   */
  private List<OutboxTable.Result> send(List<ClaimedRow> due) {
    int n = due.size();
    List<CompletableFuture<DeliveryOutcome>> futures = new ArrayList<>(n);
    long[] elapsed = new long[n];
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      int index = i;
      CompletableFuture<DeliveryOutcome> f;
      try {
        f = delivery.deliver(due.get(i).pending());
      } catch (RuntimeException e) {
        f = CompletableFuture.failedFuture(e);
      }
      futures.add(f.whenComplete((o, e) -> elapsed[index] = System.nanoTime() - start));
    }
    try {
      CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new))
          .get(deliveryTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // Each future is looked at below; a failed one is a retry, an unfinished one keeps its lease.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<OutboxTable.Result> results = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      PendingMessage pending = due.get(i).pending();
      CompletableFuture<DeliveryOutcome> f = futures.get(i);
      if (!f.isDone()) {
        // Still sending: recording a retry now could let another relay send it concurrently, so
        // the row keeps its lease and is claimed again when the lease ends.
        listener.onRetry(pending, "no answer within deliveryTimeout", lease);
        continue;
      }
      DeliveryOutcome outcome = outcomeOf(f);
      results.add(result(due.get(i), outcome, elapsed[i]));
    }
    return results;
  }

  private OutboxTable.Result result(ClaimedRow row, DeliveryOutcome outcome, long elapsedNanos) {
    PendingMessage pending = row.pending();
    return outcome.accept(
        new DeliveryOutcome.Visitor<OutboxTable.Result>() {
          @Override
          public OutboxTable.Result delivered(DeliveryOutcome.Delivered delivered) {
            listener.onDelivered(pending, Duration.ofNanos(elapsedNanos));
            return new OutboxTable.Result(row, outcome, 0);
          }

          @Override
          public OutboxTable.Result retry(DeliveryOutcome.Retry retry) {
            if (pending.attempt() >= maxAttempts) {
              return dead(
                  new DeliveryOutcome.Dead(
                      "attempts used up (" + maxAttempts + "); last: " + retry.reason()));
            }
            Duration delay = backoff.delay(pending.attempt(), ThreadLocalRandom.current());
            if (retry.notBefore().compareTo(delay) > 0) {
              delay =
                  retry.notBefore().compareTo(backoff.max()) > 0
                      ? backoff.max()
                      : retry.notBefore();
            }
            LOG.debug(
                "outbox message {}: attempt {} failed ({}); next in {}",
                pending.message().id(),
                pending.attempt(),
                retry.reason(),
                delay);
            listener.onRetry(pending, retry.reason(), delay);
            return new OutboxTable.Result(row, retry, Outbox.micros(delay));
          }

          @Override
          public OutboxTable.Result dead(DeliveryOutcome.Dead dead) {
            LOG.warn("outbox message {} is dead: {}", pending.message().id(), dead.reason());
            listener.onDead(pending, dead.reason());
            return new OutboxTable.Result(row, dead, 0);
          }
        });
  }

  private static DeliveryOutcome outcomeOf(CompletableFuture<DeliveryOutcome> f) {
    try {
      DeliveryOutcome o = f.getNow(null);
      return o != null ? o : DeliveryOutcome.retry("the delivery completed without an outcome");
    } catch (RuntimeException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      return DeliveryOutcome.retry(cause.getClass().getSimpleName() + ": " + cause.getMessage());
    }
  }

  private void work(int index) {
    while (stopping.getCount() > 0) {
      try {
        int claimed = runOnce();
        if (index == 0) {
          purgeIfDue();
        }
        if (claimed < batchSize) {
          pause();
        }
      } catch (RuntimeException e) {
        LOG.warn("outbox relay on {}: {}", outbox.table.table, e.getMessage());
        listener.onError(e);
        pause();
      }
    }
  }

  private void purgeIfDue() {
    if (!purge || System.nanoTime() - lastPurgeNanos < purgeInterval.toNanos()) {
      return;
    }
    lastPurgeNanos = System.nanoTime();
    for (int i = 0; i < MAX_PURGE_BATCHES_PER_RUN && stopping.getCount() > 0; i++) {
      int deleted = outbox.purgeDelivered(retention, purgeBatchSize);
      if (deleted > 0) {
        listener.onPurged(deleted);
      }
      if (deleted < purgeBatchSize) {
        return;
      }
    }
  }

  private void pause() {
    try {
      stopping.await(pollInterval.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stopping.countDown();
    }
  }

  /**
   * Stops the workers: each finishes the batch it is sending (at most {@code deliveryTimeout} plus
   * the recording) and then exits; a worker that does not is interrupted. Idempotent. The delivery
   * stays open: close it after the relays that use it.
   */
  @Override
  public void close() {
    stopping.countDown();
    List<Thread> all;
    synchronized (threads) {
      all = new ArrayList<>(threads);
    }
    long deadline = System.nanoTime() + deliveryTimeout.toNanos() + TimeUnit.SECONDS.toNanos(30);
    for (Thread t : all) {
      try {
        t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (t.isAlive()) {
        t.interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return "OutboxRelay[" + outbox + ", workers=" + workers + ", batchSize=" + batchSize + "]";
  }

  /**
   * Options of an {@link OutboxRelay}; each setter checks its value, {@link #build()} their
   * combination.
   */
  public static final class Builder {

    private final Outbox outbox;
    private final Delivery delivery;
    private int batchSize = 100;
    private int workers = 1;
    private Duration pollInterval = Duration.ofMillis(500);
    private Duration lease = Duration.ofSeconds(60);
    private Duration deliveryTimeout = Duration.ofSeconds(30);
    private int maxAttempts = 10;
    private Backoff backoff = Backoff.DEFAULT;
    private boolean purge = true;
    private Duration retention = Duration.ofDays(7);
    private Duration purgeInterval = Duration.ofMinutes(1);
    private int purgeBatchSize = 1_000;
    private RelayListener listener = RelayListener.NONE;
    private String threadName = "once-outbox-relay";

    Builder(Outbox outbox, Delivery delivery) {
      Arguments.present("delivery", delivery);
      this.outbox = outbox;
      this.delivery = delivery;
    }

    /** The most rows one claim takes; default 100, from 1 to 10,000. */
    public Builder batchSize(int batchSize) {
      this.batchSize = Arguments.between("batchSize", batchSize, 1, 10_000);
      return this;
    }

    /** Worker threads, each with at most one batch in flight; default 1, from 1 to 64. */
    public Builder workers(int workers) {
      this.workers = Arguments.between("workers", workers, 1, 64);
      return this;
    }

    /** How long a worker waits after finding less than a full batch due; default 500 ms. */
    public Builder pollInterval(Duration pollInterval) {
      this.pollInterval = Arguments.positive("pollInterval", pollInterval);
      return this;
    }

    /**
     * How long a claimed row stays hidden from other relays; default 60 s, at least 1 s. A relay
     * that dies mid-batch delays its rows by this much; it must exceed {@link #deliveryTimeout}.
     */
    public Builder lease(Duration lease) {
      if (lease == null || lease.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException("lease must be at least 1 second; was " + lease);
      }
      this.lease = lease;
      return this;
    }

    /**
     * How long a relay waits for a batch's answers; default 30 s. A message without an answer by
     * then keeps its claim until the lease ends. The delivery's own timeout should be shorter.
     */
    public Builder deliveryTimeout(Duration deliveryTimeout) {
      this.deliveryTimeout = Arguments.positive("deliveryTimeout", deliveryTimeout);
      return this;
    }

    /** Attempts before a message that keeps failing becomes DEAD; default 10, at least 1. */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be at least 1; was " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** The waits between attempts; default {@link Backoff#DEFAULT}. */
    public Builder backoff(Backoff backoff) {
      this.backoff = Arguments.present("backoff", backoff);
      return this;
    }

    /**
     * How long delivered rows are kept before the relay purges them; default 7 days; zero or more.
     */
    public Builder retention(Duration retention) {
      this.retention = Arguments.notNegative("retention", retention);
      return this;
    }

    /** How often worker 0 purges; default 1 minute. */
    public Builder purgeInterval(Duration purgeInterval) {
      this.purgeInterval = Arguments.positive("purgeInterval", purgeInterval);
      return this;
    }

    /** Whether the relay purges delivered rows at all; default {@code true}. */
    public Builder purge(boolean purge) {
      this.purge = purge;
      return this;
    }

    /** Rows one purge statement deletes at most; default 1,000, from 1 to 100,000. */
    public Builder purgeBatchSize(int purgeBatchSize) {
      this.purgeBatchSize = Arguments.between("purgeBatchSize", purgeBatchSize, 1, 100_000);
      return this;
    }

    /** Metrics and logging hooks; default {@link RelayListener#NONE}. */
    public Builder listener(RelayListener listener) {
      if (listener == null) {
        throw new IllegalArgumentException("listener must not be null (use RelayListener.NONE)");
      }
      this.listener = listener;
      return this;
    }

    /** The worker threads' name prefix; default {@code once-outbox-relay}. */
    public Builder threadName(String threadName) {
      this.threadName = Arguments.notBlank("threadName", threadName);
      return this;
    }

    /**
     * Builds the relay; {@link OutboxRelay#start()} starts it.
     *
     * @throws IllegalStateException if {@code deliveryTimeout} is not shorter than the lease: a
     *     send could then outlive its claim and run beside another relay's
     */
    public OutboxRelay build() {
      if (deliveryTimeout.compareTo(lease) >= 0) {
        throw new IllegalStateException(
            "deliveryTimeout ("
                + deliveryTimeout
                + ") must be shorter than lease ("
                + lease
                + "), or a send could outlive its claim");
      }
      return new OutboxRelay(this);
    }
  }
}

package dev.once.store.jdbc;

import dev.once.internal.Arguments;
import dev.once.store.IdempotencyStore;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes expired records in the background, in bounded batches, so a large table is cleaned
 * without long transactions or locks that would stall claims.
 *
 * <pre>{@code
 * Purger purger = Purger.builder(store).batchSize(1_000).interval(Duration.ofMinutes(1)).start();
 * ...
 * purger.close();
 * }</pre>
 *
 * <p>Every {@code interval} a round starts: it deletes one batch with {@link
 * IdempotencyStore#purgeExpired(int)}, and while a batch comes back full it waits {@code pause} and
 * deletes the next, so the database gets room between batches. Each batch is a task of its own on
 * the executor: a shared executor is never blocked by sleeping. An unavailable store is logged and
 * tried again next round. Any other failure, an {@link Error} included, is logged with its stack
 * trace and tried again next round too: a purger that stopped would let the table grow without a
 * sound, and the executor would keep the failure where nobody looks. Works with any {@link
 * IdempotencyStore}.
 */
public final class Purger implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Purger.class);

  private final IdempotencyStore store;
  private final int batchSize;
  private final Duration interval;
  private final Duration pause;

  /** Null for a purger that only purges when asked ({@link Builder#build()}). */
  private final @Nullable ScheduledExecutorService executor;

  private final boolean ownsExecutor;
  private final Object lock = new Object();
  private @Nullable ScheduledFuture<?> next;
  private boolean closed;
  private long roundTotal;

  private Purger(Builder b, @Nullable ScheduledExecutorService executor, boolean ownsExecutor) {
    this.store = b.store;
    this.batchSize = b.batchSize;
    this.interval = b.interval;
    this.pause = b.pause;
    this.executor = executor;
    this.ownsExecutor = ownsExecutor;
  }

  public static Builder builder(IdempotencyStore store) {
    return new Builder(store);
  }

  /**
   * Runs one round now, on the calling thread: batches until one comes back short of {@code
   * batchSize}, pausing between them. Returns how many records it deleted.
   *
   * @throws StoreUnavailableException if the store cannot be reached
   */
  public long purgeNow() throws InterruptedException {
    long total = 0;
    while (true) {
      int deleted = store.purgeExpired(batchSize);
      total += deleted;
      if (deleted < batchSize) {
        return total;
      }
      TimeUnit.NANOSECONDS.sleep(pause.toNanos());
    }
  }

  private void batch() {
    Duration delay;
    try {
      int deleted = store.purgeExpired(batchSize);
      roundTotal += deleted;
      if (deleted == batchSize) {
        delay = pause;
      } else {
        if (roundTotal > 0) {
          LOG.debug("purged {} expired records", roundTotal);
        }
        roundTotal = 0;
        delay = interval;
      }
    } catch (StoreUnavailableException e) {
      LOG.warn("purge skipped this round: {}", e.getMessage());
      roundTotal = 0;
      delay = interval;
    } catch (RuntimeException | Error e) {
      LOG.error("purge failed; trying again in {}", interval, e);
      roundTotal = 0;
      delay = interval;
    }
    schedule(delay);
  }

  private void schedule(Duration delay) {
    synchronized (lock) {
      if (!closed) {
        next =
            Objects.requireNonNull(executor, "a purger that was started")
                .schedule(this::batch, delay.toNanos(), TimeUnit.NANOSECONDS);
      }
    }
  }

  /**
   * Stops purging; a batch already running finishes. Shuts down the executor only if the purger
   * made it.
   */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      if (next != null) {
        next.cancel(false);
      }
    }
    if (ownsExecutor && executor != null) {
      executor.shutdown();
    }
  }

  /** Options of a {@link Purger}. */
  public static final class Builder {

    private final IdempotencyStore store;
    private int batchSize = 1_000;
    private Duration interval = Duration.ofMinutes(1);
    private Duration pause = Duration.ofMillis(50);
    private Duration initialDelay = Duration.ZERO;
    private @Nullable ScheduledExecutorService executor;

    private Builder(IdempotencyStore store) {
      this.store = Arguments.present("store", store);
    }

    /**
     * Records deleted per statement; default 1000. Smaller batches hold their locks for less time.
     */
    public Builder batchSize(int batchSize) {
      this.batchSize = Arguments.between("batchSize", batchSize, 1, 1_000_000);
      return this;
    }

    /** Time between the end of one round and the start of the next; default 1 minute. */
    public Builder interval(Duration interval) {
      this.interval = Arguments.positive("interval", interval);
      return this;
    }

    /** Time between two full batches of one round, to leave the database room; default 50 ms. */
    public Builder pause(Duration pause) {
      this.pause = Arguments.notNegative("pause", pause);
      return this;
    }

    /** Time before the first round; default zero. */
    public Builder initialDelay(Duration initialDelay) {
      this.initialDelay = Arguments.notNegative("initialDelay", initialDelay);
      return this;
    }

    /**
     * The executor to run batches on; default a single daemon thread of the purger's own, shut down
     * by {@link Purger#close()}. An executor passed here is never shut down by the purger.
     */
    public Builder executor(ScheduledExecutorService executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * A purger that deletes only when asked ({@link Purger#purgeNow()}), never on a schedule: for a
     * store that deletes expired records by itself and where a round is a pass over every record,
     * as on Redis (see its {@code purgeExpired}). Of the options, only {@code batchSize} and {@code
     * pause} apply to it.
     */
    public Purger build() {
      return new Purger(this, null, false);
    }

    /**
     * Starts purging.
     *
     * @throws IllegalStateException if the given executor is already shut down, or the pause is not
     *     shorter than the interval (a round would never leave room between rounds)
     */
    public Purger start() {
      if (executor != null && executor.isShutdown()) {
        throw new IllegalStateException("executor is shut down");
      }
      if (pause.compareTo(interval) >= 0) {
        throw new IllegalStateException(
            "pause (" + pause + ") must be shorter than interval (" + interval + ")");
      }
      boolean own = executor == null;
      ScheduledExecutorService ex =
          executor == null
              ? Executors.newSingleThreadScheduledExecutor(
                  r -> {
                    Thread t = new Thread(r, "once-purger");
                    t.setDaemon(true);
                    return t;
                  })
              : executor;
      Purger purger = new Purger(this, ex, own);
      purger.schedule(initialDelay);
      return purger;
    }
  }
}

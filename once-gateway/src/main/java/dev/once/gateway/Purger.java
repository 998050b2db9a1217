package dev.once.gateway;

import dev.once.store.IdempotencyStore;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Deletes expired records in the background, in bounded batches, so the store does not grow without end. */
final class Purger implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Purger.class);

  private final IdempotencyStore store;
  private final ScheduledExecutorService scheduler;

  Purger(IdempotencyStore store, Duration interval) {
    this.store = store;
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "once-purger");
      t.setDaemon(true);
      return t;
    });
    long ms = interval.toMillis();
    scheduler.scheduleWithFixedDelay(this::purge, ms, ms, TimeUnit.MILLISECONDS);
  }

  static final int BATCH = 1000;
  /** Bounds one round: at most this many batches, so it ends even on a huge backlog. */
  static final int MAX_BATCHES = 100;

  /** One round: batches until one comes back short, at most {@link #MAX_BATCHES}; store failures propagate. */
  static long purgeNow(IdempotencyStore store) {
    long purged = 0;
    for (int i = 0; i < MAX_BATCHES; i++) {
      int n = store.purgeExpired(BATCH);
      purged += n;
      if (n < BATCH) {
        break;
      }
    }
    return purged;
  }

  private void purge() {
    try {
      long purged = purgeNow(store);
      if (purged > 0) {
        log.debug("purged {} expired records", purged);
      }
    } catch (RuntimeException e) {
      // The next round tries again; a store that is down is reported by /health and the metrics.
      log.warn("purging expired records failed: {}", e.toString());
    }
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
  }
}

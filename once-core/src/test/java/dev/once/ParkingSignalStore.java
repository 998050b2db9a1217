package dev.once;

import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * An in-memory store that signals each time a caller subscribes to a record's changes, which is
 * what a wait-mode duplicate does just before it parks: a test waits for {@link #awaitParked}
 * rather than sleeping and hoping the duplicate got there. Shared with other modules through the
 * test jar.
 */
public final class ParkingSignalStore extends ForwardingStore {

  private final InMemoryStore records = InMemoryStore.create();
  private final Semaphore parked = new Semaphore(0);

  @Override
  protected IdempotencyStore delegate() {
    return records;
  }

  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    CompletableFuture<Void> change = records.awaitChange(id);
    parked.release();
    return change;
  }

  /**
   * Returns once one more caller has subscribed (parked); fails if none does within {@code within}.
   */
  public void awaitParked(Duration within) throws InterruptedException {
    if (!parked.tryAcquire(within.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("no caller parked on a record within " + within);
    }
  }
}

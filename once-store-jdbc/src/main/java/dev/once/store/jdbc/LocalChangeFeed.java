package dev.once.store.jdbc;

import dev.once.store.RecordId;
import java.util.concurrent.CompletableFuture;

/** In-process change signals, for a store that is the only writer of its database. */
final class LocalChangeFeed implements ChangeFeed {

  private final Waiters waiters = new Waiters();
  private volatile boolean closed;

  /** After close, a wait ends at once: the waiter re-reads and learns the store is closed. */
  @Override
  public CompletableFuture<Void> await(RecordId id) {
    CompletableFuture<Void> f = waiters.register(id);
    if (closed) {
      f.complete(null);
    }
    return f;
  }

  @Override
  public void changed(RecordId id) {
    waiters.wake(id);
  }

  @Override
  public boolean notifies() {
    return true;
  }

  @Override
  public void close() {
    closed = true;
    waiters.wakeAll();
  }
}

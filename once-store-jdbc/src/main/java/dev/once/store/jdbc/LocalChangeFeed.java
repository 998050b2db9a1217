package dev.once.store.jdbc;

import dev.once.store.RecordId;
import java.util.concurrent.CompletableFuture;

/** In-process change signals, for a store that is the only writer of its database. */
final class LocalChangeFeed implements ChangeFeed {

  private final Waiters waiters = new Waiters();

  @Override
  public CompletableFuture<Void> await(RecordId id) {
    return waiters.register(id);
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
    waiters.wakeAll();
  }
}

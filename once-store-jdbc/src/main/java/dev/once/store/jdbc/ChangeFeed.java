package dev.once.store.jdbc;

import dev.once.store.RecordId;
import java.util.concurrent.CompletableFuture;

/**
 * How a store tells waiters that a record may have changed: database notifications (PostgreSQL
 * LISTEN/NOTIFY), in-process signals (the embedded store, the only writer of its file), or nothing
 * (callers poll). A store without notifications uses {@link #NONE}, so the operations never branch
 * on it.
 */
interface ChangeFeed extends AutoCloseable {

  /** Completes when the record may have changed; may complete spuriously. */
  CompletableFuture<Void> await(RecordId id);

  /** Called after this process changed the record (the database may announce it by itself too). */
  void changed(RecordId id);

  boolean notifies();

  @Override
  void close();

  ChangeFeed NONE =
      new ChangeFeed() {
        @Override
        public CompletableFuture<Void> await(RecordId id) {
          return new CompletableFuture<>();
        }

        @Override
        public void changed(RecordId id) {}

        @Override
        public boolean notifies() {
          return false;
        }

        @Override
        public void close() {}
      };
}

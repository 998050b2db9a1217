package dev.once.store.jdbc;

import dev.once.store.IdempotencyStore;
import dev.once.tck.EngineContract;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine's promises (every claim finished, closed engine, slow and failing store) over the
 * embedded store.
 */
class EmbeddedStoreEngineContractTest extends EngineContract {

  @TempDir Path dir;

  @Override
  protected IdempotencyStore createStore() {
    return EmbeddedStore.builder(dir).tableName("once_engine_embedded").build();
  }

  /**
   * Every write here is synced to disk before it returns, and on a machine whose disk a whole build
   * shares, one sync has taken longer than the default 300 ms: the engine then rightly gave up a
   * lease its beat no longer proved. Two seconds leave a beat more than a second to come back, and
   * cost the tests that wait a lease out a few seconds.
   */
  @Override
  protected Duration shortLease() {
    return Duration.ofSeconds(2);
  }
}

package dev.once.store.jdbc;

import dev.once.store.IdempotencyStore;
import dev.once.tck.EngineContract;
import java.nio.file.Path;
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
}

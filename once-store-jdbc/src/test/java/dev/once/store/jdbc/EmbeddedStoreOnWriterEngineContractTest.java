package dev.once.store.jdbc;

import dev.once.store.IdempotencyStore;

/**
 * The engine's promises over the embedded store built to answer on its writer, as the gateway
 * builds it: whatever the engine runs after an asynchronous answer runs on the writer, so a
 * blocking store call anywhere on that path fails the kit at once.
 */
class EmbeddedStoreOnWriterEngineContractTest extends EmbeddedStoreEngineContractTest {

  @Override
  protected IdempotencyStore createStore() {
    return EmbeddedStore.builder(dir)
        .tableName("once_engine_embedded")
        .answersOnWriter(true)
        .build();
  }
}

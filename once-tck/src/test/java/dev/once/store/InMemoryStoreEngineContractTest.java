package dev.once.store;

import dev.once.tck.EngineContract;

class InMemoryStoreEngineContractTest extends EngineContract {

  @Override
  protected IdempotencyStore createStore() {
    return InMemoryStore.create();
  }
}

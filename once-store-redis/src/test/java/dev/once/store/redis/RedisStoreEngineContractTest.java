package dev.once.store.redis;

import dev.once.store.IdempotencyStore;
import dev.once.tck.EngineContract;

/** The engine's promises (every claim finished, closed engine, slow and failing store) over Redis. */
class RedisStoreEngineContractTest extends EngineContract {

  private static final String PREFIX = LocalRedis.uniquePrefix();

  @Override
  protected IdempotencyStore createStore() {
    return RedisStore.builder(LocalRedis.client()).keyPrefix(PREFIX).build();
  }
}

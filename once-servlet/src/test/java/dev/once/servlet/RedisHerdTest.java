package dev.once.servlet;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/** {@link HerdTest} on the machine's Redis. */
class RedisHerdTest extends HerdTest {

  @Override
  IdempotencyStore backingStore() {
    return RealStores.redis("once-servlet-test-");
  }
}

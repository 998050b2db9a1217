package dev.once.servlet;

import dev.once.store.IdempotencyStore;

/** {@link HttpSemanticsTest} on the machine's Redis. */
class RedisHttpSemanticsTest extends HttpSemanticsTest {

  @Override
  IdempotencyStore backingStore() {
    return RealStores.redis();
  }
}

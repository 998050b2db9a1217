package dev.once.servlet;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/** The contract kit ({@link ServletSemanticsTest}) on the machine's Redis. */
class RedisServletSemanticsTest extends ServletSemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.redis("once-servlet-test-");
  }
}

package dev.once.webflux;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/**
 * The contract kit ({@link WebFluxSemanticsTest}) on the machine's Redis, whose client answers on
 * its own event loop: the filter must never block there, nor let the handler run there.
 */
class RedisWebFluxSemanticsTest extends WebFluxSemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.redis("once-webflux-test-");
  }
}

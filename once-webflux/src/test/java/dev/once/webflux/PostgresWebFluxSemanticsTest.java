package dev.once.webflux;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/**
 * The contract kit ({@link WebFluxSemanticsTest}) on the machine's PostgreSQL, a blocking store
 * that gathers concurrent claims into batches: its calls run on the engine's store executor, never
 * on the event loop.
 */
class PostgresWebFluxSemanticsTest extends WebFluxSemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.postgres("once_webflux_test_");
  }
}

package dev.once.spring;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/**
 * The contract kit ({@link StarterSemanticsTest}) on the machine's PostgreSQL, which gathers
 * concurrent claims into batches; routes that are not transactional, so the starter's calls are
 * gathered as in production.
 */
class PostgresStarterSemanticsTest extends StarterSemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.postgres("once_starter_test_");
  }
}

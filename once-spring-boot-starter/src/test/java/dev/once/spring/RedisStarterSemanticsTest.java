package dev.once.spring;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/**
 * The contract kit ({@link StarterSemanticsTest}) on the machine's Redis, which gathers concurrent
 * claims into scripts; routes that are not transactional, so the starter's calls are gathered as in
 * production.
 */
class RedisStarterSemanticsTest extends StarterSemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.redis("once-starter-test-");
  }
}

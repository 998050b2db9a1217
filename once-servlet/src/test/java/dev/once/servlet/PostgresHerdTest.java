package dev.once.servlet;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/** {@link HerdTest} on the machine's Postgres. */
class PostgresHerdTest extends HerdTest {

  @Override
  IdempotencyStore backingStore() {
    return RealStores.postgres("once_servlet_test_");
  }
}

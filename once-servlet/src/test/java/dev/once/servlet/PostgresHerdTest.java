package dev.once.servlet;

import dev.once.store.IdempotencyStore;

/** {@link HerdTest} on the machine's Postgres. */
class PostgresHerdTest extends HerdTest {

  @Override
  IdempotencyStore backingStore() {
    return RealStores.postgres();
  }
}

package dev.once.servlet;

import dev.once.store.IdempotencyStore;

/** {@link HttpSemanticsTest} on the machine's Postgres. */
class PostgresHttpSemanticsTest extends HttpSemanticsTest {

  @Override
  IdempotencyStore backingStore() {
    return RealStores.postgres();
  }
}

package dev.once.servlet;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/** The contract kit ({@link ServletSemanticsTest}) on the machine's Postgres. */
class PostgresServletSemanticsTest extends ServletSemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.postgres("once_servlet_test_");
  }
}

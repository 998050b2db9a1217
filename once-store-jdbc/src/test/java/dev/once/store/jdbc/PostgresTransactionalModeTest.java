package dev.once.store.jdbc;

class PostgresTransactionalModeTest extends TransactionalModeBehaviour {
  PostgresTransactionalModeTest() {
    super(TestDatabase.POSTGRESQL);
  }
}

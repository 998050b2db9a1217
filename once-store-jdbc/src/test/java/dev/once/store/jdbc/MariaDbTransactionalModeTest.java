package dev.once.store.jdbc;

class MariaDbTransactionalModeTest extends TransactionalModeBehaviour {
  MariaDbTransactionalModeTest() {
    super(TestDatabase.MARIADB);
  }
}

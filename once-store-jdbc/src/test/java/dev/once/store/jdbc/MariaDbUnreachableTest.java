package dev.once.store.jdbc;

class MariaDbUnreachableTest extends UnreachableDatabaseBehaviour {
  MariaDbUnreachableTest() {
    super(TestDatabase.MARIADB);
  }
}

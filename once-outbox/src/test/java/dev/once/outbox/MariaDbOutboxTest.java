package dev.once.outbox;

import org.junit.jupiter.api.BeforeAll;

class MariaDbOutboxTest extends OutboxBehaviour {

  @BeforeAll
  static void openDatabase() throws Exception {
    open(TestDatabase.MARIADB, "once_outbox_maria");
  }

  @Override
  TestDatabase database() {
    return TestDatabase.MARIADB;
  }
}

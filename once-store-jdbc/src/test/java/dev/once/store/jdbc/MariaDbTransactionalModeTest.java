package dev.once.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class MariaDbTransactionalModeTest extends TransactionalModeBehaviour {

  static final String TABLE = "once_tx_mariadb";
  static final String BUSINESS = "once_tx_mariadb_payments";
  static HikariDataSource pool;
  static MariaDbStore store;

  @BeforeAll
  static void createTables() {
    pool = Services.mariaDbPool(8);
    Tables.execute(pool, "DROP TABLE IF EXISTS " + TABLE, "DROP SEQUENCE IF EXISTS " + TABLE + "_seq", "DROP TABLE IF EXISTS " + BUSINESS,
        "CREATE TABLE " + BUSINESS + " (idem_key varchar(255) PRIMARY KEY, amount int NOT NULL)");
    store = MariaDbStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build();
  }

  @AfterAll
  static void closeAll() {
    store.close();
    Tables.close(pool);
  }

  @Override
  void openForChild() {
    pool = Services.mariaDbPool(2);
    store = MariaDbStore.builder(pool).tableName(TABLE).build();
  }

  @Override
  DataSource pool() {
    return pool;
  }

  @Override
  JdbcStore store() {
    return store;
  }

  @Override
  TransactionalStore transactional() {
    return store.transactional();
  }

  @Override
  String database() {
    return "mariadb";
  }

  @Override
  String businessTable() {
    return BUSINESS;
  }
}

package dev.once.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class PostgresTransactionalModeTest extends TransactionalModeBehaviour {

  static final String TABLE = "once_tx_pg";
  static final String BUSINESS = "once_tx_pg_payments";
  static HikariDataSource pool;
  static PostgresStore store;

  @BeforeAll
  static void createTables() {
    pool = Services.postgresPool(8);
    Tables.execute(pool, "DROP TABLE IF EXISTS " + TABLE, "DROP TABLE IF EXISTS " + BUSINESS,
        "CREATE TABLE " + BUSINESS + " (idem_key varchar(255) PRIMARY KEY, amount int NOT NULL)");
    store = PostgresStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build();
  }

  @AfterAll
  static void closeAll() {
    store.close();
    Tables.close(pool);
  }

  @Override
  void openForChild() {
    pool = Services.postgresPool(2);
    store = PostgresStore.builder(pool).tableName(TABLE).build();
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
    return "postgresql";
  }

  @Override
  String businessTable() {
    return BUSINESS;
  }
}

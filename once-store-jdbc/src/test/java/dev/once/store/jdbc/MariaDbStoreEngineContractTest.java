package dev.once.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.IdempotencyStore;
import dev.once.tck.EngineContract;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The engine's promises (every claim finished, closed engine, slow and failing store) over MariaDb. */
class MariaDbStoreEngineContractTest extends EngineContract {

  static final String TABLE = Tables.unique("once_engine_mariadb");
  static HikariDataSource pool;

  @BeforeAll
  static void createSchema() {
    pool = Services.mariaDbPool(8);
    MariaDbStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build().close();
  }

  @AfterAll
  static void closePool() {
    if (pool != null) {
      Tables.execute(pool, TestDatabase.MARIADB.drop(TABLE));
    }
    Tables.close(pool);
  }

  @Override
  protected IdempotencyStore createStore() {
    return MariaDbStore.builder(pool).tableName(TABLE).build();
  }
}

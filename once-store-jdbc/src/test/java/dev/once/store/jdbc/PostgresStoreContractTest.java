package dev.once.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.tck.EngineContract;
import dev.once.tck.FaultProxy;
import dev.once.tck.IdempotencyStoreContract;
import dev.once.tck.OwnedStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

class PostgresStoreContractTest extends IdempotencyStoreContract {

  static final String TABLE = Tables.unique("once_tck_pg");

  /** The in-flight listing tests' table: they see every record, so no other test writes here. */
  static final String LISTING_TABLE = Tables.unique("once_tck_pg_list");

  static HikariDataSource pool;

  @BeforeAll
  static void createSchema() {
    pool = Services.postgresPool(70);
    Tables.execute(pool, "DROP TABLE IF EXISTS " + TABLE);
    PostgresStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build().close();
    Tables.execute(pool, TestDatabase.POSTGRESQL.drop(LISTING_TABLE));
    PostgresStore.builder(pool).tableName(LISTING_TABLE).autoCreateSchema(true).build().close();
  }

  @AfterAll
  static void closePool() {
    if (pool != null) {
      Tables.execute(pool, TestDatabase.POSTGRESQL.drop(TABLE));
      Tables.execute(pool, TestDatabase.POSTGRESQL.drop(LISTING_TABLE));
    }
    Tables.close(pool);
  }

  @Override
  protected IdempotencyStore createStore() {
    return PostgresStore.builder(pool).tableName(TABLE).build();
  }

  @Override
  protected boolean makeForeign(RecordId id) {
    return Tables.makeForeign(pool, TABLE, id);
  }

  @Override
  protected IdempotencyStore createIsolatedStore() {
    Tables.execute(pool, "DELETE FROM " + LISTING_TABLE);
    return PostgresStore.builder(pool).tableName(LISTING_TABLE).build();
  }

  @Override
  protected int serverPort() {
    return TestDatabase.POSTGRESQL.port;
  }

  @Override
  protected IdempotencyStore createStoreThrough(FaultProxy proxy) {
    // A pool of its own, closed with the store; batches forwarded, so the kit tests the store's
    // own.
    HikariDataSource pool = TestDatabase.POSTGRESQL.poolVia(proxy.port(), 1, 2_000);
    return OwnedStore.of(PostgresStore.builder(pool).tableName(TABLE).build(), pool::close);
  }

  /**
   * The engine's promises (every claim finished, closed engine, slow and failing store) over this
   * store.
   */
  @Nested
  class Engine extends EngineContract {
    @Override
    protected IdempotencyStore createStore() {
      return PostgresStore.builder(pool).tableName(TABLE).build();
    }
  }
}

package dev.once.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** The database servers the tests run on, and how to reach and set up each. */
enum TestDatabase {
  POSTGRESQL(Services.PG_PORT, "postgres") {
    @Override
    JdbcStore open(DataSource ds, String table, boolean autoCreateSchema) {
      return PostgresStore.builder(ds).tableName(table).autoCreateSchema(autoCreateSchema).build();
    }

    @Override
    TransactionalStore transactional(JdbcStore store) {
      return ((PostgresStore) store).transactional();
    }

    @Override
    String url(int port) {
      return Services.postgresUrl("127.0.0.1", port);
    }

    @Override
    String lockWaitsOn(String table) {
      return "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%"
          + table
          + "%'";
    }
  },
  MARIADB(Services.MARIADB_PORT, "root") {
    @Override
    JdbcStore open(DataSource ds, String table, boolean autoCreateSchema) {
      return MariaDbStore.builder(ds).tableName(table).autoCreateSchema(autoCreateSchema).build();
    }

    @Override
    TransactionalStore transactional(JdbcStore store) {
      return ((MariaDbStore) store).transactional();
    }

    @Override
    String url(int port) {
      return Services.mariaDbUrl("127.0.0.1", port);
    }

    @Override
    String lockWaitsOn(String table) {
      // A statement blocked on a row lock is not always listed in INNODB_TRX at once; the process
      // list shows it as a statement still running on the table.
      return "SELECT count(*) FROM information_schema.PROCESSLIST WHERE state = 'Update' AND time_ms > 50"
          + " AND info LIKE '%INSERT INTO "
          + table
          + " %'";
    }

    @Override
    String[] drop(String table) {
      return new String[] {
        "DROP TABLE IF EXISTS " + table, "DROP SEQUENCE IF EXISTS " + table + "_seq"
      };
    }
  };

  final int port;
  final String user;

  TestDatabase(int port, String user) {
    this.port = port;
    this.user = user;
  }

  abstract JdbcStore open(DataSource ds, String table, boolean autoCreateSchema);

  abstract TransactionalStore transactional(JdbcStore store);

  abstract String url(int port);

  /**
   * A query counting the statements on {@code table} that wait for a lock another transaction
   * holds.
   */
  abstract String lockWaitsOn(String table);

  String[] drop(String table) {
    return new String[] {"DROP TABLE IF EXISTS " + table};
  }

  /** A pool on the real server; skips or fails the test loudly when the server is down. */
  HikariDataSource pool(int size) {
    return this == POSTGRESQL ? Services.postgresPool(size) : Services.mariaDbPool(size);
  }

  /**
   * A pool through another port (a {@link dev.once.tck.FaultProxy}), with a short connection
   * timeout.
   */
  HikariDataSource poolVia(int port, int size, long connectionTimeoutMillis) {
    return Services.pool(url(port), user, size, connectionTimeoutMillis);
  }

  /** Drops and recreates {@code table}; returns a store on it. */
  JdbcStore openOnFreshTable(DataSource ds, String table) {
    Tables.execute(ds, drop(table));
    return open(ds, table, true);
  }
}

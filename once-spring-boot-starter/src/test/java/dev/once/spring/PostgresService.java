package dev.once.spring;

import dev.once.tck.RequiredServices;

/**
 * The PostgreSQL server tests run against (127.0.0.1:5432, database {@code test}, user postgres). A
 * test that needs it calls {@link #require()}: when it is unreachable the test is skipped loudly (a
 * WARNING line and an assumption), or fails when the build runs with {@code
 * -Donce.requireServices=true}, as CI does.
 */
final class PostgresService {

  static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

  private PostgresService() {}

  /**
   * A table name for this run only: builds in other worktrees share the server, and an older
   * build's table may have an older schema.
   */
  static String freshTable(String prefix) {
    return prefix + "_" + Long.toString(System.nanoTime(), 36);
  }

  /** Drops a store table and its sequence. */
  static void drop(String table) throws java.sql.SQLException {
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(URL, "postgres", "");
        java.sql.Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + table);
      s.execute("DROP SEQUENCE IF EXISTS " + table + "_seq");
    }
  }

  static void require() {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
  }
}

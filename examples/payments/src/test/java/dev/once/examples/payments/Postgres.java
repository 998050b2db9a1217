package dev.once.examples.payments;

import dev.once.tck.RequiredServices;

/**
 * The PostgreSQL server of the {@code postgres} profile (127.0.0.1:5432, database test). When it is
 * unreachable, tests are skipped loudly, or fail under {@code -Donce.requireServices=true} (CI).
 */
final class Postgres {

  private Postgres() {}

  /** Drops an idempotency table and its sequence. */
  static void drop(String table) {
    try (java.sql.Connection c =
            java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
        java.sql.Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + table);
      s.execute("DROP SEQUENCE IF EXISTS " + table + "_seq");
    } catch (java.sql.SQLException e) {
      System.err.println("WARNING: could not drop " + table + ": " + e.getMessage());
    }
  }

  static void require() {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
  }
}

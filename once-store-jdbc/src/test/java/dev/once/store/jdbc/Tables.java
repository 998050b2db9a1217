package dev.once.store.jdbc;

import dev.once.store.RecordId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** Test helpers for the per-test-class tables. */
final class Tables {

  /**
   * Distinguishes this test JVM's tables from those of concurrent runs of the same tests (other
   * worktrees, other CI jobs) on the same database server, which would otherwise drop each other's.
   */
  static final String RUN =
      Long.toHexString(new java.security.SecureRandom().nextLong() & 0xFFFFFFFFL);

  private Tables() {}

  /** {@code prefix} plus this run's suffix: a table no concurrent run uses. */
  static String unique(String prefix) {
    return prefix + "_" + RUN;
  }

  static void execute(DataSource ds, String... sql) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      for (String each : sql) {
        s.execute(each);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Gives the record at {@code id} a fingerprint in a form this version does not read, as a later
   * version sharing the table might write (the schema's CHECK admits no unknown state); the
   * contract kit's {@code makeForeign}.
   */
  static boolean makeForeign(DataSource ds, String table, RecordId id) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE "
                    + table
                    + " SET fingerprint = 'sha3-256/a later format'"
                    + " WHERE scope = ? AND idem_key = ?")) {
      ps.setString(1, id.scope().value());
      ps.setString(2, id.key().value());
      return ps.executeUpdate() == 1;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static void close(AutoCloseable pool) {
    if (pool != null) {
      try {
        pool.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }

  static long count(DataSource ds, String sql) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        var rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}

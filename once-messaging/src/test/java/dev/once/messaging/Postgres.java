package dev.once.messaging;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.tck.RequiredServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The machine's PostgreSQL (127.0.0.1:5432, user postgres, database test), for transactional tests.
 */
final class Postgres {

  private Postgres() {}

  /** A small pool; skips the test loudly (fails on CI) when PostgreSQL is unreachable. */
  static HikariDataSource pool(int size) {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
    config.setUsername("postgres");
    config.setPassword("");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    config.setConnectionTimeout(10_000);
    config.setPoolName("once-messaging-test");
    return new HikariDataSource(config);
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

  static long count(DataSource ds, String sql) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}

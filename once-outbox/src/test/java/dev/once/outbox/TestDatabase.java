package dev.once.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.tck.RequiredServices;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/** The real database servers the outbox tests run on, and per-run table names. */
enum TestDatabase {
  POSTGRESQL("PostgreSQL", 5432, "jdbc:postgresql://127.0.0.1:5432/test", "postgres"),
  MARIADB("MariaDB", 3306, "jdbc:mariadb://127.0.0.1:3306/test", "root");

  /**
   * Keeps this JVM's tables apart from concurrent runs (other worktrees, CI jobs) on the same
   * server.
   */
  static final String RUN = Long.toHexString(new SecureRandom().nextLong() & 0xFFFFFFFFL);

  final String label;
  final int port;
  final String url;
  final String user;

  TestDatabase(String label, int port, String url, String user) {
    this.label = label;
    this.port = port;
    this.url = url;
    this.user = user;
  }

  /** A small pool, or a skipped (locally) / failed (CI) test if the server is down. */
  HikariDataSource pool(int size) {
    RequiredServices.requireReachable(label, "127.0.0.1", port);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    config.setConnectionTimeout(10_000);
    return new HikariDataSource(config);
  }

  Outbox.Builder outbox(DataSource ds) {
    return this == POSTGRESQL ? Outbox.postgres(ds) : Outbox.mariaDb(ds);
  }

  static String table(String prefix) {
    return prefix + "_" + RUN;
  }

  static void execute(DataSource ds, String sql) {
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
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

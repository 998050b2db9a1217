package dev.once.store.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.tck.RequiredServices;

/**
 * The real database servers tests run against. A test that needs one calls {@link
 * #requirePostgres()} or {@link #requireMariaDb()} first: when the server is unreachable the test
 * is skipped loudly (a WARNING line and a JUnit assumption naming the server), or fails when the
 * build runs with {@code -Donce.requireServices=true}, as CI does, so a missing server can never
 * pass silently.
 */
final class Services {

  static final String PG_HOST = "127.0.0.1";
  static final int PG_PORT = 5432;
  static final String MARIADB_HOST = "127.0.0.1";
  static final int MARIADB_PORT = 3306;

  private Services() {}

  static void requirePostgres() {
    require("PostgreSQL", PG_HOST, PG_PORT);
  }

  static void requireMariaDb() {
    require("MariaDB", MARIADB_HOST, MARIADB_PORT);
  }

  static String postgresUrl(String host, int port) {
    return "jdbc:postgresql://" + host + ":" + port + "/test";
  }

  static String mariaDbUrl(String host, int port) {
    return "jdbc:mariadb://" + host + ":" + port + "/test";
  }

  /** A small pool on the test PostgreSQL database. */
  static HikariDataSource postgresPool(int size) {
    requirePostgres();
    return pool(postgresUrl(PG_HOST, PG_PORT), "postgres", size, 5_000);
  }

  /** A small pool on the test MariaDB database. */
  static HikariDataSource mariaDbPool(int size) {
    return mariaDbPool(size, null);
  }

  /** A small pool on the test MariaDB database whose connections first run {@code initSql}. */
  static HikariDataSource mariaDbPool(int size, String initSql) {
    requireMariaDb();
    return pool(mariaDbUrl(MARIADB_HOST, MARIADB_PORT), "root", size, 5_000, initSql);
  }

  static HikariDataSource pool(String url, String user, int size, long connectionTimeoutMillis) {
    return pool(url, user, size, connectionTimeoutMillis, null);
  }

  static HikariDataSource pool(
      String url, String user, int size, long connectionTimeoutMillis, String initSql) {
    HikariConfig config = new HikariConfig();
    config.setConnectionInitSql(initSql);
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    config.setConnectionTimeout(connectionTimeoutMillis);
    config.setInitializationFailTimeout(-1);
    config.setPoolName("test-" + url.substring(5, url.indexOf(':', 5)));
    return new HikariDataSource(config);
  }

  private static void require(String name, String host, int port) {
    RequiredServices.requireReachable(name, host, port);
  }
}

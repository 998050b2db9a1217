package dev.once.spring;

import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.MariaDbStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.jdbc.TransactionalStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/** Opens the JDBC store that matches the application's database. */
final class JdbcStores {

  private JdbcStores() {}

  /** PostgreSQL or MariaDB from the driver's product name; null for any other database. */
  static @Nullable IdempotencyStore open(DataSource dataSource, OnceProperties.Store properties) {
    String product = productName(dataSource);
    String p = product.toLowerCase(Locale.ROOT);
    if (p.contains("postgres")) {
      PostgresStore.Builder b = PostgresStore.builder(dataSource);
      PolicyMapper.set("once.store.table-name", properties.getTableName(), b::tableName);
      PolicyMapper.set("once.store.query-timeout", properties.getQueryTimeout(), b::queryTimeout);
      return b.autoCreateSchema(properties.isAutoCreateSchema()).build();
    }
    if (p.contains("mariadb")) {
      MariaDbStore.Builder b = MariaDbStore.builder(dataSource);
      PolicyMapper.set("once.store.table-name", properties.getTableName(), b::tableName);
      PolicyMapper.set("once.store.query-timeout", properties.getQueryTimeout(), b::queryTimeout);
      return b.autoCreateSchema(properties.isAutoCreateSchema()).build();
    }
    return null;
  }

  /** The transactional view factory of a store that has one, else null. */
  static @Nullable TransactionalStore transactional(IdempotencyStore store) {
    if (store instanceof PostgresStore pg) {
      return pg.transactional();
    }
    return store instanceof MariaDbStore maria ? maria.transactional() : null;
  }

  static String productName(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return c.getMetaData().getDatabaseProductName();
    } catch (SQLException e) {
      throw new IllegalStateException(
          "Once cannot reach the DataSource to choose its idempotency store ("
              + e.getMessage()
              + "). Start the database, set once.store.type=memory, or define an IdempotencyStore bean.",
          e);
    }
  }
}

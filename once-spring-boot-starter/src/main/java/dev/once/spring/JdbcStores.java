package dev.once.spring;

import dev.once.store.IdempotencyStore;
import dev.once.store.StoreUnavailableException;
import dev.once.store.jdbc.MariaDbStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.jdbc.TransactionalStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/** Opens the JDBC store that matches the application's database. */
final class JdbcStores {

  private JdbcStores() {}

  /** What to do about a database that is down at startup. */
  static final String UNREACHABLE_ACTION =
      "Start the database, or point spring.datasource.url at one that is up; or set"
          + " once.store.type=memory, or define an IdempotencyStore bean.";

  /**
   * PostgreSQL or MariaDB from the driver's product name; null for any other database.
   *
   * @param url the DataSource's JDBC URL ({@code spring.datasource.url}), if known: only to name
   *     the store in the log and in errors
   * @throws OnceStoreUnreachableException if the database cannot be reached
   */
  static @Nullable IdempotencyStore open(
      DataSource dataSource, OnceProperties.Store properties, @Nullable String url) {
    String product;
    try {
      product = productName(dataSource);
    } catch (StoreUnavailableException e) {
      throw describe(url, null, properties).unreachable(e, UNREACHABLE_ACTION);
    }
    String p = product.toLowerCase(Locale.ROOT);
    if (p.contains("postgres")) {
      PostgresStore.Builder b = PostgresStore.builder(dataSource);
      return opened(
          b::tableName,
          b::queryTimeout,
          () -> b.autoCreateSchema(properties.isAutoCreateSchema()).build(),
          PostgresStore::tableName,
          url,
          product,
          properties);
    }
    if (p.contains("mariadb")) {
      MariaDbStore.Builder b = MariaDbStore.builder(dataSource);
      return opened(
          b::tableName,
          b::queryTimeout,
          () -> b.autoCreateSchema(properties.isAutoCreateSchema()).build(),
          MariaDbStore::tableName,
          url,
          product,
          properties);
    }
    return null;
  }

  /**
   * Maps the store properties onto a server store's builder (the one place they are), builds it and
   * logs the store picked; a database that went away since it answered is reported as unreachable.
   */
  private static <S extends IdempotencyStore> S opened(
      Consumer<String> tableName,
      Consumer<Duration> queryTimeout,
      Supplier<S> build,
      Function<S, String> table,
      @Nullable String url,
      String product,
      OnceProperties.Store properties) {
    PolicyMapper.set("once.store.table-name", properties.getTableName(), tableName);
    PolicyMapper.set("once.store.query-timeout", properties.getQueryTimeout(), queryTimeout);
    S store;
    try {
      store = build.get();
    } catch (StoreUnavailableException e) {
      throw describe(url, product, properties).unreachable(e, UNREACHABLE_ACTION);
    }
    describe(url, product, properties).withNamespace("table " + table.apply(store)).logChosen();
    return store;
  }

  /**
   * The store as the operator knows it: the database product (from the driver, else the URL's
   * scheme) and the URL's host, port and database, with no user, password or parameters.
   */
  static ChosenStore describe(
      @Nullable String url, @Nullable String product, OnceProperties.Store properties) {
    String kind = product;
    String address = "the application's DataSource";
    if (url != null && url.startsWith("jdbc:")) {
      String rest = url.substring("jdbc:".length());
      int scheme = rest.indexOf("://");
      if (kind == null && scheme > 0) {
        String s = rest.substring(0, scheme).toLowerCase(Locale.ROOT);
        kind =
            s.startsWith("postgres")
                ? "PostgreSQL"
                : s.startsWith("mariadb") || s.startsWith("mysql") ? "MariaDB" : s;
      }
      if (scheme > 0) {
        String location = rest.substring(scheme + 3);
        int end = location.indexOf('?');
        location = end < 0 ? location : location.substring(0, end);
        int at = location.lastIndexOf('@');
        address = at < 0 ? location : location.substring(at + 1);
      }
    }
    String table = properties.getTableName();
    return new ChosenStore(
        kind == null ? "database" : kind,
        address,
        "table " + (table == null ? "(default)" : table));
  }

  /** The transactional view factory of a store that has one, else null. */
  static @Nullable TransactionalStore transactional(IdempotencyStore store) {
    if (store instanceof PostgresStore pg) {
      return pg.transactional();
    }
    return store instanceof MariaDbStore maria ? maria.transactional() : null;
  }

  /**
   * The database's product name, from the driver.
   *
   * @throws StoreUnavailableException caused by the driver's error if no connection can be had
   */
  static String productName(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return c.getMetaData().getDatabaseProductName();
    } catch (SQLException | RuntimeException e) {
      // A pool reports a database it cannot reach with its own unchecked exception (HikariCP's
      // PoolInitializationException on its first connection).
      throw new StoreUnavailableException("cannot connect to the DataSource", e);
    }
  }
}

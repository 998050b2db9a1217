package dev.once.store.jdbc;

import dev.once.store.jdbc.support.TableName;
import java.time.Duration;

/**
 * The options every JDBC store shares. Each setter validates its value at once and names the option
 * in the {@link IllegalArgumentException} it throws; {@code build()} checks combinations.
 *
 * @param <B> the concrete builder, so chained calls keep their type
 */
abstract class JdbcStoreBuilder<B extends JdbcStoreBuilder<B>> {

  static final Duration DEFAULT_QUERY_TIMEOUT = Duration.ofSeconds(5);

  /** The table name the schema files use, and the default. */
  static final String DEFAULT_TABLE = "once_records";

  TableName table = new TableName(null, DEFAULT_TABLE);
  Duration queryTimeout = DEFAULT_QUERY_TIMEOUT;

  JdbcStoreBuilder() {}

  /**
   * The table holding the records, {@code name} or {@code schema.name}; default {@code
   * once_records}. Each part must match {@code [A-Za-z_][A-Za-z0-9_]{0,47}}: the name is spliced
   * into SQL, so nothing else is accepted.
   */
  public B tableName(String tableName) {
    this.table = TableName.parse(tableName);
    return self();
  }

  /**
   * The longest any one statement may run before the driver cancels it and the operation throws
   * {@link dev.once.store.StoreUnavailableException}; default 5 seconds. JDBC counts query timeouts
   * in whole seconds, so this must be a whole number of seconds, at least one. How long getting a
   * connection may take is the pool's setting (HikariCP's {@code connectionTimeout}). The embedded
   * store's driver counts the timeout only while waiting for a lock, so that store interrupts the
   * statements of an operation that holds its connection longer than this itself, and also waits no
   * longer than this for the connection.
   */
  public B queryTimeout(Duration queryTimeout) {
    if (queryTimeout == null || queryTimeout.getSeconds() < 1 || queryTimeout.getNano() != 0) {
      throw new IllegalArgumentException(
          "queryTimeout must be a whole number of seconds, at least 1; was " + queryTimeout);
    }
    if (queryTimeout.getSeconds() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("queryTimeout is too long: " + queryTimeout);
    }
    this.queryTimeout = queryTimeout;
    return self();
  }

  int timeoutSeconds() {
    return (int) queryTimeout.toSeconds();
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }
}

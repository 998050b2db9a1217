package dev.once.store.jdbc;

import dev.once.store.jdbc.support.Migrations;
import java.sql.Connection;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Applies a dialect's schema file to a connection; every statement in it is idempotent. */
final class SchemaCreator {

  private static final Logger LOG = LoggerFactory.getLogger(SchemaCreator.class);

  private SchemaCreator() {}

  @SuppressWarnings(
      "NullAway") // safe: the work's result is a Void, whose only value is null, and nobody reads
  // it
  static void create(Connection connection, Dialect dialect, int timeoutSeconds)
      throws SQLException {
    new Session(connection, timeoutSeconds, TransactionControl.OWN)
        .atomically(
            session -> {
              String lock = dialect.schemaLock();
              for (String migration : dialect.migrations()) {
                Migrations.apply(
                    connection,
                    migration,
                    JdbcStoreBuilder.DEFAULT_TABLE,
                    dialect.table,
                    lock,
                    timeoutSeconds);
                lock = null; // held to the end of the transaction
              }
              return null;
            });
    LOG.info("schema for {} is in place ({})", dialect.table, dialect.migrations());
  }
}

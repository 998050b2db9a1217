package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Applies a dialect's schema file to a connection; every statement in it is idempotent. */
final class SchemaCreator {

  private static final Logger LOG = LoggerFactory.getLogger(SchemaCreator.class);

  private SchemaCreator() {}

  static void create(Connection connection, Dialect dialect, int timeoutSeconds) throws SQLException {
    new Session(connection, timeoutSeconds, TransactionControl.OWN).atomically(session -> {
      try (Statement s = connection.createStatement()) {
        s.setQueryTimeout(timeoutSeconds);
        String lock = dialect.schemaLock();
        if (lock != null) {
          s.execute(lock);
        }
        for (String sql : Migrations.statements(dialect.migration(), dialect.table)) {
          s.execute(sql);
        }
      }
      return null;
    });
    LOG.info("schema for {} is in place ({})", dialect.table, dialect.migration());
  }
}

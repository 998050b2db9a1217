package dev.once.store.jdbc;

import dev.once.store.StoreFullException;
import dev.once.store.StoreUnavailableException;
import dev.once.store.jdbc.support.TableName;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns JDBC failures into the SPI's {@link StoreUnavailableException}: the engine then fails
 * closed (or open, per policy) within a bounded time instead of seeing driver exceptions.
 *
 * <p>Connection-level failures (no connection from the pool in time, SQLState class 08, transient
 * or recoverable connection exceptions) and statement timeouts mean the database did not answer.
 * Any other SQL error (a missing table, a permission) also leaves the store unable to answer, so it
 * is reported the same way, with the SQLState in the message and a log line for the operator. A
 * full disk (the embedded store's {@code SQLITE_FULL}) is a {@link StoreFullException}: nothing was
 * stored, and the operator has something specific to fix.
 */
final class Failures {

  private static final Logger LOG = LoggerFactory.getLogger(Failures.class);

  private Failures() {}

  static StoreUnavailableException unavailable(String operation, TableName table, SQLException e) {
    String message =
        operation + " on " + table + " failed: SQLState " + e.getSQLState() + ": " + e.getMessage();
    if (isDiskFull(e)) {
      LOG.warn("{}: the disk, or the database's size limit, is full; nothing was stored", message);
      StoreFullException full = new StoreFullException(message);
      full.initCause(e);
      return full;
    }
    if (isConnectionFailure(e)) {
      LOG.debug("{}", message);
    } else {
      LOG.warn("{}", message);
    }
    return new StoreUnavailableException(message, e);
  }

  /**
   * Whether SQLite, here or as a cause, reported {@code SQLITE_FULL}; bounded by the depth of the
   * cause chain.
   */
  static boolean isDiskFull(SQLException e) {
    // Without the optional driver no SQLite error can occur, and its classes must not be touched.
    return SqliteDriver.PRESENT && EmbeddedConnection.isDiskFull(e);
  }

  static boolean isConnectionFailure(SQLException e) {
    String state = e.getSQLState();
    return e instanceof java.sql.SQLTransientConnectionException
        || e instanceof java.sql.SQLRecoverableException
        || e instanceof java.sql.SQLNonTransientConnectionException
        || e instanceof java.sql.SQLTimeoutException
        || (state != null && state.startsWith("08"));
  }
}

package dev.once.store.jdbc;

import dev.once.store.jdbc.internal.TableName;
import dev.once.store.StoreUnavailableException;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns JDBC failures into the SPI's {@link StoreUnavailableException}: the engine then fails
 * closed (or open, per policy) within a bounded time instead of seeing driver exceptions.
 *
 * <p>Connection-level failures (no connection from the pool in time, SQLState class 08, transient
 * or recoverable connection exceptions) and statement timeouts mean the database did not answer.
 * Any other SQL error (a missing table, a permission) also leaves the store unable to answer, so
 * it is reported the same way, with the SQLState in the message and a log line for the operator.
 */
final class Failures {

  private static final Logger LOG = LoggerFactory.getLogger(Failures.class);

  private Failures() {}

  static StoreUnavailableException unavailable(String operation, TableName table, SQLException e) {
    String message = operation + " on " + table + " failed: SQLState " + e.getSQLState() + ": " + e.getMessage();
    if (isConnectionFailure(e)) {
      LOG.debug("{}", message);
    } else {
      LOG.warn("{}", message);
    }
    return new StoreUnavailableException(message, e);
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

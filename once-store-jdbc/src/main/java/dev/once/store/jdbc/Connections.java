package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Where an operation's statements run, and who makes them durable. */
interface Connections {

  /**
   * Runs {@code work} on a connection and returns its result once the changes it made are durable;
   * throws if they could not be made so (the operation then failed). A {@link RuntimeException} or
   * {@link Error} from {@code work} passes through.
   */
  <T> T run(Session.SqlWork<T> work, int timeoutSeconds) throws SQLException;

  /** Who ends the transactions of operations on these connections. */
  TransactionControl control();

  /** A connection per operation from the user's pool, returned to it right after. */
  static Connections of(DataSource dataSource) {
    return new Connections() {
      @Override
      public <T> T run(Session.SqlWork<T> work, int timeoutSeconds) throws SQLException {
        Connection connection = dataSource.getConnection();
        try {
          return work.run(new Session(connection, timeoutSeconds, TransactionControl.OWN));
        } finally {
          try {
            connection.close();
          } catch (SQLException e) {
            // The operation's outcome stands (it committed, or failed on its own); a connection
            // that fails to close is the pool's concern.
          }
        }
      }

      @Override
      public TransactionControl control() {
        return TransactionControl.OWN;
      }
    };
  }

  /**
   * The caller's connection, in the caller's transaction: never committed, rolled back or closed.
   */
  static Connections borrowed(Connection connection) {
    return new Connections() {
      @Override
      public <T> T run(Session.SqlWork<T> work, int timeoutSeconds) throws SQLException {
        return work.run(new Session(connection, timeoutSeconds, TransactionControl.CALLER));
      }

      @Override
      public TransactionControl control() {
        return TransactionControl.CALLER;
      }
    };
  }
}

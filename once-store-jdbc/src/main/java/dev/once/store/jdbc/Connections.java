package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/** Where an operation gets its connection, and what it does with it afterwards. */
interface Connections {

  Connection open() throws SQLException;

  /**
   * Hands back the connection of an operation that succeeded. Once this returns, the operation's
   * changes are durable; it throws if they could not be made so (the operation then failed).
   */
  void done(Connection connection) throws SQLException;

  /**
   * Hands back the connection of an operation that failed with {@code failure} (null if unknown);
   * never throws.
   */
  void release(Connection connection, @Nullable Exception failure);

  /** Who ends the transactions of operations on these connections. */
  TransactionControl control();

  /** A connection per operation from the user's pool, returned to it right after. */
  static Connections of(DataSource dataSource) {
    return new Connections() {
      @Override
      public Connection open() throws SQLException {
        return dataSource.getConnection();
      }

      @Override
      public void done(Connection connection) {
        release(connection, null);
      }

      @Override
      public void release(Connection connection, @Nullable Exception failure) {
        try {
          connection.close();
        } catch (SQLException e) {
          // The operation's outcome stands (it committed); a connection that fails to close is the
          // pool's concern.
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
      public Connection open() {
        return connection;
      }

      @Override
      public void done(Connection c) {}

      @Override
      public void release(Connection c, @Nullable Exception failure) {}

      @Override
      public TransactionControl control() {
        return TransactionControl.CALLER;
      }
    };
  }
}

package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Where an operation gets its connection, and what it does with it afterwards. */
interface Connections {

  Connection open() throws SQLException;

  void done(Connection connection) throws SQLException;

  /** Whether the store controls transactions on these connections (false in transactional mode). */
  boolean ownTransactions();

  /** A connection per operation from the user's pool, returned to it right after. */
  static Connections of(DataSource dataSource) {
    return new Connections() {
      @Override
      public Connection open() throws SQLException {
        return dataSource.getConnection();
      }

      @Override
      public void done(Connection connection) throws SQLException {
        connection.close();
      }

      @Override
      public boolean ownTransactions() {
        return true;
      }
    };
  }

  /** The caller's connection, in the caller's transaction: never committed, rolled back or closed. */
  static Connections borrowed(Connection connection) {
    return new Connections() {
      @Override
      public Connection open() {
        return connection;
      }

      @Override
      public void done(Connection c) {}

      @Override
      public boolean ownTransactions() {
        return false;
      }
    };
  }
}

package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * One operation's use of a connection: every statement it prepares carries the query timeout
 * (except the embedded store's: {@link StatementCache} says why), and {@code control} says who ends
 * its transactions: the store (its own connection), the caller (transactional mode), or the
 * connection's group commit (the embedded store). Where the connection is the embedded store's own,
 * {@code statements} keeps its statements prepared between operations.
 */
record Session(
    Connection connection,
    int timeoutSeconds,
    TransactionControl control,
    @Nullable StatementCache statements) {

  /**
   * The savepoint of one operation's atomic unit in a group-committed transaction. One name serves
   * nested units too: SQLite releases and rolls back to the innermost savepoint of a name.
   */
  static final String SAVEPOINT = "SAVEPOINT once_operation";

  static final String RELEASE = "RELEASE once_operation";
  static final String ROLLBACK_TO = "ROLLBACK TO once_operation";

  Session(Connection connection, int timeoutSeconds, TransactionControl control) {
    this(connection, timeoutSeconds, control, null);
  }

  /**
   * A statement for {@code sql}, to be closed by the caller; where statements are cached, closing
   * keeps it prepared for the next operation.
   */
  PreparedStatement prepare(String sql) throws SQLException {
    if (statements != null) {
      return statements.prepare(sql);
    }
    PreparedStatement ps = connection.prepareStatement(sql);
    ps.setQueryTimeout(timeoutSeconds);
    return ps;
  }

  /** This session on {@code other}, a wrapper of its connection (tests count through one). */
  Session on(Connection other) {
    return new Session(other, timeoutSeconds, control);
  }

  /**
   * Runs {@code work} atomically. On the store's own connection that is a transaction of its own;
   * on a caller's connection it is the caller's transaction, which the store never ends; in a
   * group-committed transaction it is a savepoint, undone alone if the work fails.
   */
  <T> T atomically(SqlWork<T> work) throws SQLException {
    if (control == TransactionControl.CALLER) {
      return work.run(this);
    }
    if (control == TransactionControl.BATCH) {
      execute(SAVEPOINT);
      try {
        T result = work.run(this);
        execute(RELEASE);
        return result;
      } catch (SQLException | RuntimeException | Error e) {
        // An Error too: the batch's other operations commit, and this one's writes must not.
        try {
          execute(ROLLBACK_TO);
          execute(RELEASE);
        } catch (SQLException r) {
          e.addSuppressed(r); // SQLite rolled the whole transaction back; the writer finds out
        }
        throw e;
      }
    }
    boolean autoCommit = connection.getAutoCommit();
    if (autoCommit) {
      connection.setAutoCommit(false);
    }
    try {
      T result = work.run(this);
      connection.commit();
      return result;
    } catch (SQLException | RuntimeException | Error e) {
      // An Error too: turning auto-commit back on below would commit the half-done work.
      rollbackQuietly(e);
      throw e;
    } finally {
      if (autoCommit) {
        connection.setAutoCommit(true);
      }
    }
  }

  /**
   * Runs a statement that takes no parameters and returns no rows (transaction control), kept
   * prepared where statements are cached: JDBC's savepoint and commit calls prepare their SQL anew
   * every time, which costs a group-committed operation as much as its own statements.
   */
  void execute(String sql) throws SQLException {
    try (PreparedStatement ps = prepare(sql)) {
      ps.execute();
    }
  }

  /**
   * This session as a part of a transaction that someone else ends: inside {@link #atomically}, the
   * work of one batch runs many operations, and none of them may commit on its own.
   */
  Session joined() {
    return control == TransactionControl.OWN
        ? new Session(connection, timeoutSeconds, TransactionControl.CALLER, statements)
        : this;
  }

  /**
   * Makes a single-statement change durable: a pool configured with {@code autoCommit=false} hands
   * out connections on which nothing would ever commit otherwise.
   */
  void commitIfOwned() throws SQLException {
    if (control == TransactionControl.OWN && !connection.getAutoCommit()) {
      connection.commit();
    }
  }

  private void rollbackQuietly(Throwable cause) {
    try {
      connection.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /** A unit of JDBC work. */
  @FunctionalInterface
  interface SqlWork<T> {
    T run(Session session) throws SQLException;
  }
}

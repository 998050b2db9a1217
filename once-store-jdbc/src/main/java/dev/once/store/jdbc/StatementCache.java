package dev.once.store.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The embedded store's statements, each prepared once on its one connection and kept for the next
 * operation. SQLite compiles a statement's text into a program on every prepare, and for the short
 * statements of a claim or a finish that costs as much as running them; the store runs a handful of
 * texts, so it keeps them. The statements handed out look like fresh ones: closing one only clears
 * its parameters and batch, so the operations' code is the same on every store. A statement that
 * failed is dropped and prepared anew next time, since the driver finalizes a statement whose step
 * failed (a full disk, an interrupt).
 *
 * <p>The statements carry no query timeout. In this driver that timeout is only SQLite's busy
 * timeout, which it sets on the connection before every execution and back after it (two native
 * calls and a configuration update each time). Once the connection holds its file's lock, which it
 * keeps, no statement waits for one; while another process holds the file, a statement waits the
 * connection's own busy timeout and the store is refused. {@link EmbeddedConnection}'s progress
 * handler is what bounds a statement's run.
 *
 * <p>Used by the embedded store's writer thread alone, so it needs no lock.
 */
final class StatementCache {

  /**
   * More texts than the store runs (the batched heartbeat's text depends on how many leases it
   * carries): past this, statements are prepared and closed as usual.
   */
  static final int MAX_STATEMENTS = 64;

  private final Connection connection;
  private final Map<String, Kept> bySql = new HashMap<>();

  StatementCache(Connection connection) {
    this.connection = connection;
  }

  /** A statement for {@code sql}, prepared once; the caller closes it as any other. */
  PreparedStatement prepare(String sql) throws SQLException {
    Kept kept = bySql.get(sql);
    if (kept != null) {
      return kept.handedOut;
    }
    PreparedStatement statement = connection.prepareStatement(sql);
    if (bySql.size() >= MAX_STATEMENTS) {
      return statement;
    }
    kept = new Kept(sql, statement);
    bySql.put(sql, kept);
    return kept.handedOut;
  }

  /** Closes every kept statement, before the connection is closed. */
  void closeAll() {
    for (Kept kept : bySql.values()) {
      closeQuietly(kept.statement);
    }
    bySql.clear();
  }

  private static void closeQuietly(PreparedStatement statement) {
    try {
      statement.close();
    } catch (SQLException e) {
      // The statement failed before, or the connection closes next and frees what is left.
    }
  }

  /**
   * A kept statement, and the view of it that operations use: its {@code close()} readies it for
   * the next operation, unless it failed, in which case it is dropped and closed for good.
   */
  private final class Kept implements InvocationHandler {
    private final String sql;
    private final PreparedStatement statement;
    private final PreparedStatement handedOut;

    Kept(String sql, PreparedStatement statement) {
      this.sql = sql;
      this.statement = statement;
      this.handedOut =
          (PreparedStatement)
              Proxy.newProxyInstance(
                  StatementCache.class.getClassLoader(),
                  new Class<?>[] {PreparedStatement.class},
                  this);
    }

    @Override
    public @Nullable Object invoke(Object proxy, Method method, @Nullable Object[] args)
        throws Throwable {
      if (method.getName().equals("close") && method.getParameterCount() == 0) {
        if (bySql.get(sql) == this) {
          statement.clearBatch();
          statement.clearParameters();
        } else {
          closeQuietly(statement);
        }
        return null;
      }
      try {
        return method.invoke(statement, args);
      } catch (InvocationTargetException e) {
        // An Error too: the driver's state for a statement that threw out of its step is unknown.
        bySql.remove(sql, this);
        throw e.getCause();
      }
    }
  }
}

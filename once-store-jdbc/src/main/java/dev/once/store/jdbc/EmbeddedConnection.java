package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.sqlite.Function;
import org.sqlite.SQLiteConfig;

/**
 * The embedded store's one SQLite connection, lent to one operation at a time. SQLite allows one
 * writer anyway, and a single connection lets the file be opened with an exclusive lock, so a
 * second process (a second gateway pointed at the same directory by mistake) cannot open it.
 */
final class EmbeddedConnection implements Connections {

  private final ReentrantLock lock = new ReentrantLock();
  private final Connection connection;
  private final long lockTimeoutMillis;
  private boolean closed;

  EmbeddedConnection(String url, boolean synchronousFull, Clock clock, long lockTimeoutMillis) throws SQLException {
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    config.setSynchronous(synchronousFull ? SQLiteConfig.SynchronousMode.FULL : SQLiteConfig.SynchronousMode.NORMAL);
    config.setLockingMode(SQLiteConfig.LockingMode.EXCLUSIVE);
    config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
    config.setBusyTimeout(1_000);
    this.lockTimeoutMillis = lockTimeoutMillis;
    this.connection = config.createConnection(url);
    Function.create(connection, SqliteDialect.NOW_FUNCTION, new Function() {
      @Override
      protected void xFunc() throws SQLException {
        result(SqliteDialect.micros(clock.instant()));
      }
    });
  }

  @Override
  public Connection open() throws SQLException {
    try {
      // Bounded like a pool's connection timeout: a stuck operation must not hang every caller.
      if (!lock.tryLock(lockTimeoutMillis, TimeUnit.MILLISECONDS)) {
        throw new java.sql.SQLTransientConnectionException("the embedded store stayed busy for " + lockTimeoutMillis + " ms");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.sql.SQLTransientConnectionException("interrupted while waiting for the embedded store", e);
    }
    if (closed) {
      lock.unlock();
      throw new SQLNonTransientConnectionException("the embedded store is closed");
    }
    return connection;
  }

  @Override
  public void done(Connection c) {
    lock.unlock();
  }

  @Override
  public boolean ownTransactions() {
    return true;
  }

  void close() {
    lock.lock();
    try {
      closed = true;
      connection.close();
    } catch (SQLException e) {
      // Every commit already reached the file; WAL recovery handles the rest on the next open.
    } finally {
      lock.unlock();
    }
  }
}

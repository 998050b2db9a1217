package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.sqlite.Function;
import org.sqlite.SQLiteConfig;

/**
 * The embedded store's one SQLite connection, lent to one operation at a time, with a group
 * commit. SQLite allows one writer anyway, and a single connection lets the file be opened with an
 * exclusive lock, so a second process (a second gateway pointed at the same directory by mistake)
 * cannot open it.
 *
 * <p><b>Group commit.</b> A durable commit costs a disk sync (milliseconds) while an operation's
 * statements cost microseconds, so committing each operation on its own caps the store at a few
 * hundred operations a second. Instead, operations run their statements in one open transaction,
 * forming a <em>batch</em>; an operation that has run then waits until its batch is committed. The
 * first waiter of a batch leads: it queues for the connection behind the operations already
 * waiting for it (the lock is fair), so they join the batch first, then commits the whole batch
 * with one sync and wakes its members. If the commit fails, the batch is rolled back and every
 * member fails: none of them had answered its caller, so nothing a caller saw is lost. Reads wait
 * for their batch too, because they may have seen its uncommitted writes.
 */
final class EmbeddedConnection implements Connections {

  // Fair, so that a batch's leader lets the operations already waiting join its batch before it commits.
  private final ReentrantLock lock = new ReentrantLock(true);
  private final Connection connection;
  private final long lockTimeoutMillis;
  private Runnable onRollback = () -> {};
  /** The batch that operations now join; guarded by {@link #lock}. */
  private Batch current = new Batch();
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
    // From here on the connection is always inside the open batch's transaction.
    connection.setAutoCommit(false);
  }

  /**
   * What to forget when a batch is rolled back: state kept in memory on the strength of writes
   * that were never committed (the dialect's reserved block of tokens).
   */
  void onRollback(Runnable forget) {
    this.onRollback = forget;
  }

  @Override
  public Connection open() throws SQLException {
    lock();
    if (closed) {
      lock.unlock();
      throw new SQLNonTransientConnectionException("the embedded store is closed");
    }
    return connection;
  }

  @Override
  public void done(Connection c) throws SQLException {
    Batch mine = current;
    lock.unlock();
    mine.awaitCommit(this);
  }

  @Override
  public void release(Connection c) {
    lock.unlock();
  }

  @Override
  public TransactionControl control() {
    return TransactionControl.BATCH;
  }

  /**
   * Commits the open batch, as its leader, and wakes its members with the outcome. Throws only if
   * the connection could not be had: the batch is then still open, and another member leads.
   */
  private void commit(Batch batch) throws SQLException {
    lock();
    try {
      if (current != batch) {
        return; // close() committed it
      }
      current = new Batch();
      SQLException failure = null;
      try {
        connection.commit();
      } catch (SQLException e) {
        failure = e;
        try {
          connection.rollback();
        } catch (SQLException r) {
          e.addSuppressed(r);
        }
        onRollback.run();
      }
      batch.finish(failure);
    } finally {
      lock.unlock();
    }
  }

  private void lock() throws SQLException {
    try {
      // Bounded like a pool's connection timeout: a stuck operation must not hang every caller.
      if (!lock.tryLock(lockTimeoutMillis, TimeUnit.MILLISECONDS)) {
        throw new SQLTransientConnectionException("the embedded store stayed busy for " + lockTimeoutMillis + " ms");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLTransientConnectionException("interrupted while waiting for the embedded store", e);
    }
  }

  /** Commits what is pending and closes the file; operations after this fail. */
  void close() {
    lock.lock();
    Batch last = current;
    SQLException failure = null;
    try {
      if (!closed) {
        closed = true;
        current = new Batch();
        try {
          connection.commit();
        } catch (SQLException e) {
          failure = e;
        }
        connection.close();
      }
    } catch (SQLException e) {
      // Every commit already reached the file; WAL recovery handles the rest on the next open.
    } finally {
      lock.unlock();
    }
    last.finish(failure);
  }

  /** The operations of one transaction, and its commit's outcome. */
  private static final class Batch {
    private boolean led;
    private boolean committed;
    private SQLException failure;

    /** Returns once the batch is committed, leading its commit if no one else does; throws if it failed. */
    void awaitCommit(EmbeddedConnection owner) throws SQLException {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(owner.lockTimeoutMillis * 2);
      while (true) {
        synchronized (this) {
          if (committed) {
            if (failure != null) {
              throw new SQLException("the embedded store's commit failed: " + failure.getMessage(),
                  failure.getSQLState(), failure);
            }
            return;
          }
          if (led) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
              // Still open: it may yet commit, so the caller's outcome is unknown, like a lost commit reply.
              throw new SQLTransientConnectionException("the embedded store's commit did not finish in time");
            }
            try {
              TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new SQLTransientConnectionException("interrupted while waiting for the embedded store's commit", e);
            }
            continue;
          }
          led = true;
        }
        try {
          owner.commit(this);
        } catch (SQLException e) {
          // This leader could not get the connection; hand the lead to another member.
          synchronized (this) {
            led = false;
            notifyAll();
          }
          throw e;
        }
      }
    }

    synchronized void finish(SQLException outcome) {
      if (!committed) {
        committed = true;
        failure = outcome;
        notifyAll();
      }
    }
  }
}

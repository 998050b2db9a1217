package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.sqlite.Function;
import org.sqlite.ProgressHandler;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * The embedded store's one SQLite connection, lent to one operation at a time, with a group commit.
 * SQLite allows one writer anyway, and a single connection lets the file be opened with an
 * exclusive lock, so a second process (a second gateway pointed at the same directory by mistake)
 * cannot open it.
 *
 * <p><b>Group commit.</b> A durable commit costs a disk sync (milliseconds) while an operation's
 * statements cost microseconds, so committing each operation on its own caps the store at a few
 * hundred operations a second. Instead, operations run their statements in one open transaction,
 * forming a <em>batch</em>; an operation that has run then waits until its batch is committed. The
 * first waiter of a batch leads: it queues for the connection behind the operations already waiting
 * for it (the lock is fair), so they join the batch first, then commits the whole batch with one
 * sync and wakes its members. If the commit fails, the batch is rolled back and every member fails:
 * none of them had answered its caller, so nothing a caller saw is lost. Reads wait for their batch
 * too, because they may have seen its uncommitted writes.
 *
 * <p><b>A batch SQLite rolled back.</b> After {@code SQLITE_FULL}, {@code SQLITE_IOERR} or {@code
 * SQLITE_NOMEM} SQLite may roll back the whole open transaction by itself, and with it the writes
 * of every operation of the batch so far; the connection is then in autocommit mode, where each
 * later statement would commit on its own while {@code commit()} fails. So after any failed
 * operation or commit the connection checks that a transaction is still open, by beginning one: if
 * that succeeds there was none, the batch is failed as a whole (none of its operations happened),
 * and the new transaction holds the next batch. If no transaction can be begun, the connection is
 * lent to nobody until one can. The store recovers by itself once the disk has room again.
 *
 * <p><b>Bounded statements.</b> In this driver JDBC's query timeout is only SQLite's busy timeout,
 * and a long statement (a huge purge batch) would hold the one connection for as long as it runs.
 * So a progress handler, called every {@value #PROGRESS_STEPS} virtual machine steps, interrupts
 * any statement of an operation that has held the connection longer than the timeout; the statement
 * fails with {@code SQLITE_INTERRUPT}, and the batch is rolled back as above if SQLite rolled it
 * back. Commits are never interrupted: a sync is not SQLite work the handler sees.
 */
final class EmbeddedConnection implements Connections {

  // Fair, so that a batch's leader lets the operations already waiting join its batch before it
  // commits.
  private final ReentrantLock lock = new ReentrantLock(true);
  private final Connection connection;
  private final long lockTimeoutMillis;

  /**
   * SQLite virtual machine steps between two checks of the deadline: rare enough to cost nothing.
   */
  private static final int PROGRESS_STEPS = 50_000;

  private static final long NOT_LENT = Long.MAX_VALUE;

  /** When the operation now holding the connection must be done, by {@link System#nanoTime()}. */
  private volatile long lentUntil = NOT_LENT;

  private Runnable onRollback = () -> {};

  /** The batch that operations now join; guarded by {@link #lock}. */
  private Batch current = new Batch();

  /**
   * Whether the connection is inside a transaction, as it must be when lent; guarded by {@link
   * #lock}.
   */
  private boolean inTransaction = true;

  private boolean closed;

  EmbeddedConnection(String url, boolean synchronousFull, Clock clock, long lockTimeoutMillis)
      throws SQLException {
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    config.setSynchronous(
        synchronousFull ? SQLiteConfig.SynchronousMode.FULL : SQLiteConfig.SynchronousMode.NORMAL);
    config.setLockingMode(SQLiteConfig.LockingMode.EXCLUSIVE);
    config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
    config.setBusyTimeout(1_000);
    this.lockTimeoutMillis = lockTimeoutMillis;
    this.connection = config.createConnection(url);
    Function.create(
        connection,
        SqliteDialect.NOW_FUNCTION,
        new Function() {
          @Override
          protected void xFunc() throws SQLException {
            result(SqliteDialect.micros(clock.instant()));
          }
        });
    ProgressHandler.setHandler(
        connection,
        PROGRESS_STEPS,
        new ProgressHandler() {
          @Override
          protected int progress() {
            long until = lentUntil;
            return until != NOT_LENT && System.nanoTime() - until > 0 ? 1 : 0;
          }
        });
    // From here on the connection is always inside the open batch's transaction.
    connection.setAutoCommit(false);
  }

  /**
   * What to forget when a batch is rolled back: state kept in memory on the strength of writes that
   * were never committed (the dialect's reserved block of tokens).
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
    if (!inTransaction) {
      try {
        begin();
      } catch (SQLException e) {
        lock.unlock();
        throw new SQLTransientConnectionException(
            "the embedded store cannot begin a transaction: " + e.getMessage(), e);
      }
    }
    lentUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lockTimeoutMillis);
    return connection;
  }

  @Override
  public void done(@Nullable Connection c) throws SQLException {
    lentUntil = NOT_LENT;
    Batch mine = current;
    lock.unlock();
    mine.awaitCommit(this);
  }

  @Override
  public void release(Connection c, @Nullable Exception failure) {
    lentUntil = NOT_LENT;
    try {
      recoverTransaction(failure);
    } finally {
      lock.unlock();
    }
  }

  /**
   * After a failure, makes sure the connection is in a transaction again; if SQLite had rolled the
   * batch's transaction back, fails the batch with {@code cause}, since none of it was stored.
   * Called holding {@link #lock}.
   */
  private void recoverTransaction(@Nullable Exception cause) {
    boolean lost;
    try {
      begin();
      lost = true; // there was no transaction to begin inside of
    } catch (SQLException e) {
      // "cannot start a transaction within a transaction": the batch is intact. Any other failure
      // leaves the connection outside a transaction, and begin() is tried again before it is lent.
      lost = !inTransaction;
    }
    if (lost) {
      Batch rolledBack = current;
      current = new Batch();
      onRollback.run();
      rolledBack.finish(
          new SQLException(
              "SQLite rolled back the embedded store's transaction after an error;"
                  + " the operations of its batch did not happen",
              null,
              cause));
    }
  }

  /** Begins a transaction; fails if one is open. Called holding {@link #lock}. */
  private void begin() throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute("BEGIN IMMEDIATE");
      inTransaction = true;
    } catch (SQLException e) {
      inTransaction = e.getMessage() != null && e.getMessage().contains("within a transaction");
      throw e;
    }
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
          e.addSuppressed(r); // SQLite may have rolled back already, leaving no transaction to end
        }
        onRollback.run();
        recoverTransaction(e);
      }
      batch.finish(failure);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes the connection, waiting at most the lock timeout — like a pool's connection timeout, so a
   * stuck operation cannot hang every caller. An interrupt does not cut the wait short: a worker
   * being cancelled must still finish its lease (the store's other clients do the same); the
   * interrupt is kept for the caller.
   */
  private void lock() throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lockTimeoutMillis);
    boolean interrupted = false;
    try {
      while (true) {
        try {
          if (lock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            return;
          }
          throw new SQLTransientConnectionException(
              "the embedded store stayed busy for " + lockTimeoutMillis + " ms");
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
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
    private @Nullable SQLException failure;

    /**
     * Returns once the batch is committed, leading its commit if no one else does; throws if it
     * failed. An interrupt does not cut the wait short — the operation is in the batch, so its
     * outcome is the commit's, and the caller must learn it — but is kept for the caller.
     */
    void awaitCommit(EmbeddedConnection owner) throws SQLException {
      long deadline =
          System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(owner.lockTimeoutMillis * 2);
      boolean interrupted = false;
      try {
        while (true) {
          synchronized (this) {
            if (committed) {
              if (failure != null) {
                throw new SQLException(
                    "the embedded store's commit failed: " + failure.getMessage(),
                    failure.getSQLState(),
                    failure);
              }
              return;
            }
            if (led) {
              long left = deadline - System.nanoTime();
              if (left <= 0) {
                // Still open: it may yet commit, so the caller's outcome is unknown, like a lost
                // commit reply.
                throw new SQLTransientConnectionException(
                    "the embedded store's commit did not finish in time");
              }
              try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
              } catch (InterruptedException e) {
                interrupted = true;
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
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }

    synchronized void finish(@Nullable SQLException outcome) {
      if (!committed) {
        committed = true;
        failure = outcome;
        notifyAll();
      }
    }
  }

  /**
   * Whether SQLite, here or as a cause, reported {@code SQLITE_FULL}; bounded by the depth of the
   * cause chain.
   */
  static boolean isDiskFull(SQLException e) {
    Throwable t = e;
    for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {
      if (t instanceof SQLiteException s && s.getResultCode() == SQLiteErrorCode.SQLITE_FULL) {
        return true;
      }
    }
    return false;
  }
}

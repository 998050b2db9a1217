package dev.once.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.Function;
import org.sqlite.ProgressHandler;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * The embedded store's one SQLite connection and the one thread that writes through it. SQLite
 * allows one writer anyway, and a single connection lets the file be opened with an exclusive lock,
 * so a second process (a second gateway pointed at the same directory by mistake) cannot open it.
 *
 * <p><b>Group commit by one writer.</b> A durable commit costs a disk sync (a fraction of a
 * millisecond to milliseconds) while an operation's statements cost microseconds, so committing
 * each operation on its own caps the store at a few hundred operations a second. Callers therefore
 * queue their operations for the writer thread, which takes every operation queued so far, runs
 * them one after another in one open transaction (each inside its own savepoint where it needs to
 * be atomic), commits them with one sync and then answers each. Operations queued while a sync is
 * under way form the next batch, so the batches grow with the load by themselves. If the commit
 * fails, the batch is rolled back and every operation in it fails: none of them had been answered,
 * so nothing a caller saw is lost. Reads are answered after the commit too, because they may have
 * seen the batch's uncommitted writes. Only the writer touches the connection, so its statements
 * stay prepared between operations ({@link StatementCache}), and no caller waits for a lock held by
 * another.
 *
 * <p><b>A batch SQLite rolled back.</b> After {@code SQLITE_FULL}, {@code SQLITE_IOERR} or {@code
 * SQLITE_NOMEM} SQLite may roll back the whole open transaction by itself, and with it the writes
 * of every operation of the batch so far; the connection is then in autocommit mode, where each
 * later statement would commit on its own while {@code commit()} fails. So after any failed
 * operation or commit the writer checks that a transaction is still open, by beginning one: if that
 * succeeds there was none, the batch so far is failed as a whole (none of its operations happened),
 * and the new transaction holds the rest. If no transaction can be begun, each operation fails
 * until one can. The store recovers by itself once the disk has room again. Where the driver throws
 * rather than reports an error (an out-of-memory in its native call of a commit), the commit may
 * have reached the file: the batch's operations fail with their outcome unknown, never as not
 * having happened, and the writer goes on, as it does after any one operation's {@code Error}.
 *
 * <p><b>Bounded statements and waits.</b> In this driver JDBC's query timeout is only SQLite's busy
 * timeout, and a long statement (a huge purge batch) would hold the writer for as long as it runs.
 * So a progress handler, called every {@value #PROGRESS_STEPS} virtual machine steps, interrupts
 * any statement of an operation that has run longer than the timeout; the statement fails with
 * {@code SQLITE_INTERRUPT}, and the batch is rolled back as above if SQLite rolled it back. Commits
 * are never interrupted: a sync is not SQLite work the handler sees. A watchdog thread bounds every
 * caller's wait, blocking or asynchronous: an operation the writer has not taken within the timeout
 * (like a pool's connection timeout) is taken back, so it never runs, and fails; one taken but not
 * answered within three times the timeout (a sync that does not return) fails with its outcome
 * unknown, like a lost commit reply.
 */
final class EmbeddedConnection implements Connections {

  private static final Logger log = LoggerFactory.getLogger(EmbeddedConnection.class);

  /**
   * SQLite virtual machine steps between two checks of the deadline: rare enough to cost nothing.
   */
  private static final int PROGRESS_STEPS = 50_000;

  private static final long NOT_RUNNING = Long.MAX_VALUE;

  /** IMMEDIATE: the batch takes the write lock up front, as the connection is opened to do. */
  private static final String BEGIN = "BEGIN IMMEDIATE";

  private static final String COMMIT = "COMMIT";

  private final Connection connection;
  private final StatementCache statements;
  private final Session session;
  private final long timeoutNanos;
  private final Thread writer;
  private final ScheduledExecutorService watchdog;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition queued = lock.newCondition();

  /** Operations waiting for the writer; guarded by {@link #lock}. */
  private final ArrayDeque<Task<?>> queue = new ArrayDeque<>();

  /** Guarded by {@link #lock}. */
  private boolean closed;

  /** The batch the writer is running, for the watchdog. */
  private volatile List<Task<?>> running = List.of();

  /** When the operation the writer runs must be done, by {@link System#nanoTime()}. */
  private volatile long runningUntil = NOT_RUNNING;

  private volatile Runnable onRollback = () -> {};

  /** Whether the connection is inside a transaction; the writer's own. */
  private boolean inTransaction = true;

  EmbeddedConnection(String url, boolean synchronousFull, Clock clock, int timeoutSeconds)
      throws SQLException {
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    config.setSynchronous(
        synchronousFull ? SQLiteConfig.SynchronousMode.FULL : SQLiteConfig.SynchronousMode.NORMAL);
    config.setLockingMode(SQLiteConfig.LockingMode.EXCLUSIVE);
    config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
    config.setBusyTimeout(1_000);
    // Statement journals (the pages a statement inside a gathered transaction would have to undo)
    // stay in memory. With temp files, the first journal over SQLite's 64 KiB spill threshold
    // became a file in the system's temporary directory, which an exclusive connection keeps open
    // and writes every later statement's journal to: a pwrite per page that the transaction
    // touched before, on every statement, under load. Temporary tables and sorts stay in memory
    // too; the store's statements bound both.
    config.setTempStore(SQLiteConfig.TempStore.MEMORY);
    // No statement's generated keys are read: without this the driver matches every update's text
    // against a pattern after it runs, and after an INSERT prepares and runs a query for the rowid.
    config.setGetGeneratedKeys(false);
    this.timeoutNanos = TimeUnit.SECONDS.toNanos(timeoutSeconds);
    this.connection = config.createConnection(url);
    try {
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
              long until = runningUntil;
              return until != NOT_RUNNING && System.nanoTime() - until > 0 ? 1 : 0;
            }
          });
      // From here on the connection is always inside the open batch's transaction.
      connection.setAutoCommit(false);
    } catch (SQLException e) {
      connection.close();
      throw e;
    }
    this.statements = new StatementCache(connection);
    this.session = new Session(connection, timeoutSeconds, TransactionControl.BATCH, statements);
    this.writer = new Thread(this::write, "once-embedded-store-writer");
    writer.setDaemon(true);
    this.watchdog =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "once-embedded-store-watchdog");
              t.setDaemon(true);
              return t;
            });
    // A round every quarter of the timeout: a late operation fails at most that much late.
    long round = Math.max(1, timeoutNanos / 4);
    watchdog.scheduleWithFixedDelay(this::police, round, round, TimeUnit.NANOSECONDS);
    writer.start();
  }

  /**
   * What to forget when a batch is rolled back: state kept in memory on the strength of writes that
   * were never committed (the dialect's reserved block of tokens).
   */
  void onRollback(Runnable forget) {
    this.onRollback = forget;
  }

  /** {@inheritDoc} The timeout is the one this connection was opened with. */
  @Override
  public <T> T run(Session.SqlWork<T> work, int timeoutSeconds) throws SQLException {
    if (Thread.currentThread() == writer) {
      // Only what follows an answer runs here (EmbeddedStore.Builder#answersOnWriter); its task
      // would wait in the queue of the thread that waits for it until the watchdog failed it, and
      // every other caller with it.
      throw new IllegalStateException(
          "a blocking call of the embedded store on its own writer thread: what follows an"
              + " answered asynchronous call must not call the store blocking");
    }
    Task<T> task = submit(work);
    boolean interrupted = false;
    try {
      // Bounded by the watchdog. An interrupt does not cut the wait short: a worker being
      // cancelled must still learn its operation's outcome (the store's other clients do the
      // same); it is kept for the caller.
      while (true) {
        try {
          return task.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw rethrown(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * {@code work}, queued for the writer: the future completes on the writer thread once the
   * operation's changes are durable, or fails with what {@link #run} would throw; the watchdog
   * fails it if the writer does not take it or answer it in time.
   */
  <T> Task<T> submit(Session.SqlWork<T> work) {
    Task<T> task = new Task<>(work);
    lock.lock();
    try {
      if (closed) {
        task.completeExceptionally(
            new SQLNonTransientConnectionException("the embedded store is closed"));
        return task;
      }
      queue.add(task);
      if (queue.size() == 1) {
        queued.signal();
      }
    } finally {
      lock.unlock();
    }
    return task;
  }

  @Override
  public TransactionControl control() {
    return TransactionControl.BATCH;
  }

  /**
   * The watchdog's round: an operation queued longer than the timeout is taken back, so it never
   * runs, and fails as busy; one taken but not answered within three times the timeout of being
   * queued (a sync that does not return) fails with its outcome unknown, like a lost commit reply.
   * Both APIs are bounded so, and no caller's thread has to wait to bound them.
   */
  private void police() {
    try {
      long now = System.nanoTime();
      List<Task<?>> late = new ArrayList<>();
      lock.lock();
      try {
        // Queued in order, so the first one young enough ends the search.
        while (!queue.isEmpty() && now - queue.peek().queuedAt > timeoutNanos) {
          late.add(queue.poll());
        }
      } finally {
        lock.unlock();
      }
      for (Task<?> task : late) {
        task.completeExceptionally(
            new SQLTransientConnectionException(
                "the embedded store stayed busy for " + timeoutNanos / 1_000_000 + " ms"));
      }
      for (Task<?> task : running) {
        if (!task.isDone() && now - task.queuedAt > 3 * timeoutNanos) {
          task.completeExceptionally(
              new SQLTransientConnectionException(
                  "the embedded store's commit did not finish in time"));
        }
      }
    } catch (RuntimeException | Error e) {
      // Never let one round end the rounds: scheduleWithFixedDelay would run no more of them, and
      // every later wait for the writer would go unbounded.
      log.error("the embedded store's watchdog round failed; the next one runs as planned", e);
    }
  }

  /** The writer thread: a batch at a time, until closed and every queued operation has run. */
  private void write() {
    List<Task<?>> batch = new ArrayList<>();
    List<Task<?>> ran = new ArrayList<>();
    while (takeQueued(batch)) {
      try {
        for (Task<?> task : batch) {
          runOne(task, ran);
        }
        commit(ran);
      } catch (RuntimeException | Error e) {
        // Thrown outside any one operation, where nothing above expects it: the writer must
        // outlive it too, or every later operation would wait out the watchdog and fail.
        failBatch(batch, outcomeUnknown("failed around a commit", e));
      }
      batch.clear();
      ran.clear();
    }
    running = List.of();
    watchdog.shutdownNow();
    statements.closeAll();
    try {
      connection.close();
    } catch (SQLException e) {
      // Every commit already reached the file; WAL recovery handles the rest on the next open.
    }
  }

  /** Moves every queued operation to {@code batch}, waiting for one; false once closed and done. */
  private boolean takeQueued(List<Task<?>> batch) {
    lock.lock();
    try {
      while (queue.isEmpty()) {
        if (closed) {
          return false;
        }
        queued.awaitUninterruptibly();
      }
      batch.addAll(queue);
      queue.clear();
      running = List.copyOf(batch);
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Runs one operation in the open transaction; those that ran are added to {@code ran}. */
  private void runOne(Task<?> task, List<Task<?>> ran) {
    if (task.isDone()) {
      return; // the watchdog answered it: it did not run, which is one outcome it allowed
    }
    if (!inTransaction) {
      try {
        begin();
      } catch (SQLException | RuntimeException | Error e) {
        task.completeExceptionally(
            new SQLTransientConnectionException(
                "the embedded store cannot begin a transaction: " + e, e));
        return;
      }
    }
    runningUntil = System.nanoTime() + timeoutNanos;
    try {
      task.run(session);
      ran.add(task);
    } catch (Throwable failure) {
      // An Error too: the writer must outlive any one operation, or every later one would hang.
      task.completeExceptionally(failure);
      recoverTransaction(failure, ran);
    } finally {
      runningUntil = NOT_RUNNING;
    }
  }

  /**
   * After a failure, makes sure the connection is in a transaction again; if SQLite had rolled the
   * batch's transaction back, fails the operations in {@code ran}, since none of them was stored.
   */
  private void recoverTransaction(Throwable cause, List<Task<?>> ran) {
    boolean lost;
    try {
      begin();
      lost = true; // there was no transaction to begin inside of
    } catch (SQLException e) {
      // "cannot start a transaction within a transaction": the batch is intact. Any other failure
      // leaves the connection outside a transaction, and begin() is tried again before the next.
      lost = !inTransaction;
    }
    if (lost) {
      onRollback.run();
      SQLException rolledBack =
          new SQLException(
              "SQLite rolled back the embedded store's transaction after an error;"
                  + " the operations of its batch did not happen",
              null,
              cause);
      for (Task<?> task : ran) {
        task.completeExceptionally(rolledBack);
      }
      ran.clear();
    }
  }

  /** Begins a transaction; fails if one is open. */
  private void begin() throws SQLException {
    try {
      session.execute(BEGIN);
      inTransaction = true;
    } catch (SQLException e) {
      inTransaction = e.getMessage() != null && e.getMessage().contains("within a transaction");
      throw e;
    }
  }

  /**
   * Commits the operations that ran, with one sync, answers each with the outcome and begins the
   * next batch's transaction. The commit and the begin are statements of their own, kept prepared,
   * rather than JDBC's {@code commit()}, which prepares both anew and reports a failed begin as a
   * failed commit: that would tell callers their durable writes were lost.
   */
  private void commit(List<Task<?>> ran) {
    if (!inTransaction) {
      return; // every operation of the batch failed, and nothing is open to commit
    }
    try {
      session.execute(COMMIT);
    } catch (SQLException e) {
      failBatch(
          ran,
          new SQLException(
              "the embedded store's commit failed: " + e.getMessage(), e.getSQLState(), e));
      return;
    } catch (RuntimeException | Error e) {
      // Thrown by the driver rather than reported by SQLite (an out-of-memory in its native call,
      // a defect): the commit may have reached the file, so no caller may be told it did not.
      failBatch(ran, outcomeUnknown("failed in a commit", e));
      return;
    }
    inTransaction = false;
    for (Task<?> task : ran) {
      task.answer();
    }
    try {
      begin();
    } catch (SQLException | RuntimeException | Error e) {
      // The next operation tries again before it runs, and fails alone if it cannot.
    }
  }

  /**
   * Fails the unanswered operations of {@code tasks}, whose commit failed, with {@code failure} and
   * leaves the connection in a new transaction, or out of one if none can be begun. Whatever the
   * failed commit left open is rolled back: the operations' callers are told they failed.
   */
  private void failBatch(List<Task<?>> tasks, SQLException failure) {
    try {
      connection.rollback(); // the driver begins the next transaction right after
    } catch (SQLException | RuntimeException | Error r) {
      failure.addSuppressed(r); // SQLite may have rolled back already, or the commit went through
    }
    for (Task<?> task : tasks) {
      task.completeExceptionally(failure); // a no-op for those already answered
    }
    try {
      onRollback.run();
      recoverTransaction(failure, new ArrayList<>());
    } catch (RuntimeException | Error e) {
      failure.addSuppressed(e);
      inTransaction = false; // begun again before the next operation
    }
  }

  /**
   * What callers of a batch learn when the driver threw rather than reported an error: the batch
   * may have reached the file, or not, like a commit whose reply was lost.
   */
  private static SQLException outcomeUnknown(String where, Throwable cause) {
    log.error("the embedded store's driver {}; the outcome of its batch is unknown", where, cause);
    return new SQLTransientConnectionException(
        "the embedded store's driver "
            + where
            + " ("
            + cause
            + "); whether the batch reached the file is unknown",
        cause);
  }

  /**
   * Runs what is queued, commits it and closes the file; operations after this fail. Returns once
   * the writer is done, or after twice the timeout if an operation holds it longer.
   */
  void close() {
    lock.lock();
    try {
      closed = true;
      queued.signal();
    } finally {
      lock.unlock();
    }
    if (Thread.currentThread() == writer) {
      return;
    }
    boolean interrupted = false;
    long deadline = System.nanoTime() + 2 * timeoutNanos;
    while (writer.isAlive() && System.nanoTime() - deadline < 0) {
      try {
        TimeUnit.NANOSECONDS.timedJoin(writer, Math.max(1, deadline - System.nanoTime()));
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private static SQLException rethrown(@Nullable Throwable failure) {
    if (failure instanceof SQLException e) {
      return e;
    }
    if (failure instanceof RuntimeException e) {
      throw e;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    return new SQLException(failure);
  }

  /** One queued operation: its work, its result until the commit, and then its answer. */
  static final class Task<T> extends CompletableFuture<T> {
    private final Session.SqlWork<T> work;
    private @Nullable T result;

    /** When it was queued, by {@link System#nanoTime()}. */
    final long queuedAt = System.nanoTime();

    Task(Session.SqlWork<T> work) {
      this.work = work;
    }

    void run(Session session) throws SQLException {
      result = work.run(session);
    }

    @SuppressWarnings("NullAway") // a work's result is null only where T is Void
    void answer() {
      complete(result);
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

package dev.once.store.jdbc;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.RecordId;
import dev.once.store.jdbc.support.TableName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waiters woken by PostgreSQL LISTEN/NOTIFY: the schema's triggers NOTIFY channel {@code
 * once_changes} on every transition a waiter cares about, and one daemon thread per store holds one
 * connection from the user's pool in LISTEN and wakes the matching futures.
 *
 * <p>Only records marked {@code watched} notify, because PostgreSQL serialises the commits of
 * notifying transactions; {@link #await} marks the record before returning, so a waiter that
 * subscribes, then reads, cannot miss a change: either the change committed before the mark (the
 * read sees it) or after (it notifies).
 *
 * <p>The thread starts with the first wait, so a store nobody waits on holds no extra connection;
 * that first wait returns once the listener is live (or fails to become live within the query
 * timeout, in which case the future completes at once and the waiter re-reads). Whenever the
 * listener reconnects after losing its connection it wakes every waiter, because notifications sent
 * while it was not listening are lost: each waiter then re-reads its record, which is always
 * correct (wake-ups may be spurious). It backs off and reconnects until closed.
 */
final class PostgresChangeFeed implements ChangeFeed {

  static final String CHANNEL = "once_changes";

  private static final Logger LOG = LoggerFactory.getLogger(PostgresChangeFeed.class);
  private static final int POLL_MILLIS = 500;
  private static final long MAX_BACKOFF_MILLIS = 5_000;

  private final DataSource dataSource;
  private final TableName table;
  private final int timeoutSeconds;
  private final String watch;
  private final Waiters waiters = new Waiters();
  private final CompletableFuture<Void> firstListen = new CompletableFuture<>();
  private final Object lock = new Object();
  private @Nullable Thread thread;
  private volatile boolean closed;

  PostgresChangeFeed(DataSource dataSource, TableName table, int timeoutSeconds) {
    this.dataSource = dataSource;
    this.table = table;
    this.timeoutSeconds = timeoutSeconds;
    this.watch =
        "UPDATE "
            + table.qualified()
            + " SET watched = true WHERE scope = ? AND idem_key = ? AND NOT watched";
  }

  @Override
  public CompletableFuture<Void> await(RecordId id) {
    CompletableFuture<Void> f = waiters.register(id);
    if (closed) {
      f.complete(null);
      return f;
    }
    startOnce();
    if (!listening()) {
      f.complete(null);
      return f;
    }
    markWatched(id, f);
    return f;
  }

  /**
   * Waits, at most the query timeout, for the listener's first LISTEN; true once it has happened.
   */
  private boolean listening() {
    try {
      firstListen.get(timeoutSeconds, TimeUnit.SECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Asks the record's next transition to notify. If that fails, the waiter is woken to re-read. */
  private void markWatched(RecordId id, CompletableFuture<Void> f) {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(watch)) {
      ps.setQueryTimeout(timeoutSeconds);
      Rows.bindId(ps, 1, id);
      ps.executeUpdate();
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (SQLException e) {
      LOG.debug("could not mark {} as watched; waking its waiter to re-read", id, e);
      f.complete(null);
    }
  }

  @Override
  public void changed(RecordId id) {
    // The triggers announce every change, including those made by other nodes.
  }

  @Override
  public boolean notifies() {
    return true;
  }

  private void startOnce() {
    synchronized (lock) {
      if (thread == null && !closed) {
        thread = new Thread(this::listen, "once-pg-listener-" + table);
        thread.setDaemon(true);
        thread.start();
      }
    }
  }

  private void listen() {
    long backoff = 100;
    while (!closed) {
      try (Connection c = dataSource.getConnection()) {
        if (!c.getAutoCommit()) {
          c.setAutoCommit(true);
        }
        try (Statement s = c.createStatement()) {
          s.execute("LISTEN " + CHANNEL);
        }
        LOG.debug("listening for changes to {}", table);
        if (!firstListen.complete(null)) {
          // A reconnect: whatever changed while nobody listened went unannounced.
          waiters.wakeAll();
        }
        backoff = 100;
        PGConnection pg = c.unwrap(PGConnection.class);
        while (!closed) {
          PGNotification[] batch = pg.getNotifications(POLL_MILLIS);
          if (batch != null) {
            for (PGNotification n : batch) {
              dispatch(n.getParameter());
            }
          }
        }
        // The connection goes back to the user's pool: it must not keep collecting notifications.
        try (Statement s = c.createStatement()) {
          s.execute("UNLISTEN " + CHANNEL);
        }
      } catch (SQLException | RuntimeException e) {
        if (closed) {
          break;
        }
        LOG.warn(
            "change listener for {} lost its connection ({}); reconnecting in {} ms",
            table,
            e.getMessage(),
            backoff);
        waiters.wakeAll();
        sleep(backoff);
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
      }
    }
  }

  /**
   * The payload of a change to {@code id} in {@code table}: {@code <table>\n<scope>\n<key>}, as the
   * schema's trigger function writes it; scopes and keys cannot contain a newline.
   */
  static String payload(TableName table, RecordId id) {
    return table.name() + '\n' + id.scope().value() + '\n' + id.key().value();
  }

  /** Reads a {@link #payload}, and wakes the waiters of its record if it names this table. */
  private void dispatch(String payload) {
    int first = payload.indexOf('\n');
    int last = payload.lastIndexOf('\n');
    if (first < 0 || first == last || !payload.substring(0, first).equals(table.name())) {
      return;
    }
    try {
      waiters.wake(
          RecordId.of(
              new Scope(payload.substring(first + 1, last)),
              IdempotencyKey.of(payload.substring(last + 1))));
    } catch (IllegalArgumentException e) {
      LOG.debug("ignoring a malformed change notification", e);
    }
  }

  /** Sleeps, but wakes at once when the feed closes. */
  private void sleep(long millis) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        lock.wait(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    Thread t;
    synchronized (lock) {
      closed = true;
      t = thread;
      lock.notifyAll();
    }
    if (t != null) {
      // The listener sees the flag within one poll interval; it is never interrupted, because an
      // interrupt inside the driver could break a connection that goes back to the user's pool.
      try {
        t.join(TimeUnit.SECONDS.toMillis(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    waiters.wakeAll();
  }
}

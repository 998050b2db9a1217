package dev.once.store.jdbc;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.RecordId;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waiters woken by PostgreSQL LISTEN/NOTIFY: the schema's triggers NOTIFY channel
 * {@code once_changes} on every transition a waiter cares about, and one daemon thread per store
 * holds one connection from the user's pool in LISTEN and wakes the matching futures.
 *
 * <p>The thread starts with the first wait, so a store nobody waits on holds no extra connection.
 * Whenever the listener (re)connects it wakes every waiter, because notifications sent while it
 * was not listening are lost: each waiter then re-reads its record, which is always correct
 * (wake-ups may be spurious). On a connection failure it backs off and reconnects until closed.
 */
final class PostgresChangeFeed implements ChangeFeed {

  static final String CHANNEL = "once_changes";

  private static final Logger LOG = LoggerFactory.getLogger(PostgresChangeFeed.class);
  private static final int POLL_MILLIS = 500;
  private static final long MAX_BACKOFF_MILLIS = 5_000;

  private final DataSource dataSource;
  private final TableName table;
  private final Waiters waiters = new Waiters();
  private final Object lock = new Object();
  private Thread thread;
  private volatile boolean closed;

  PostgresChangeFeed(DataSource dataSource, TableName table) {
    this.dataSource = dataSource;
    this.table = table;
  }

  @Override
  public CompletableFuture<Void> await(RecordId id) {
    CompletableFuture<Void> f = waiters.register(id);
    if (closed) {
      f.complete(null);
    } else {
      startOnce();
    }
    return f;
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
        waiters.wakeAll();
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
        LOG.warn("change listener for {} lost its connection ({}); reconnecting in {} ms", table, e.getMessage(), backoff);
        waiters.wakeAll();
        sleep(backoff);
        backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
      }
    }
  }

  /** Payload: {@code <table>\n<scope>\n<key>}; scopes and keys cannot contain a newline. */
  private void dispatch(String payload) {
    int first = payload.indexOf('\n');
    int last = payload.lastIndexOf('\n');
    if (first < 0 || first == last || !payload.substring(0, first).equals(table.name())) {
      return;
    }
    try {
      waiters.wake(RecordId.of(new Scope(payload.substring(first + 1, last)), IdempotencyKey.of(payload.substring(last + 1))));
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

package dev.once.store.jdbc;

import dev.once.internal.Arguments;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The store contract over JDBC, written once: each operation takes a connection from its {@link
 * Connections}, runs the dialect's SQL with a query timeout, and maps failures to {@link
 * StoreUnavailableException}. The public stores and the transactional view are instances of this
 * class over different connection sources.
 */
final class JdbcOperations implements IdempotencyStore {

  /**
   * Deadlocks resolved by the database are tried this often in all, on the store's own connections
   * only.
   */
  private static final int MAX_TRANSACTION_ATTEMPTS = 5;

  /**
   * A claim whose statement neither granted the lease nor saw a record that blocks it (the record
   * changed concurrently) runs again; this bounds that loop, which in practice ends in one round.
   */
  private static final int MAX_CLAIM_ROUNDS = 16;

  private final Dialect dialect;
  private final Statements sql;
  private final Connections connections;
  private final int timeoutSeconds;
  private final ChangeFeed feed;

  JdbcOperations(
      Dialect dialect,
      Statements sql,
      Connections connections,
      int timeoutSeconds,
      ChangeFeed feed) {
    this.dialect = dialect;
    this.sql = sql;
    this.connections = connections;
    this.timeoutSeconds = timeoutSeconds;
    this.feed = feed;
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    ClaimResult result =
        run(
            "claim",
            session -> {
              for (int round = 0; round < MAX_CLAIM_ROUNDS; round++) {
                ClaimRow row = dialect.claim(session, request);
                if (row.claimed()) {
                  IdempotencyRecord r =
                      Objects.requireNonNull(row.record(), "a claimed row carries its record");
                  boolean stolen = row.attempt() > 1;
                  return new ClaimResult.Claimed(
                      r.token(), r.leaseUntil(), stolen, stolen ? r.recoveryPoint() : null);
                }
                if (row.record() != null && !claimable(row.record(), request)) {
                  return new ClaimResult.Existing(row.record());
                }
                // The statement read an older version than the one it conflicted with; read again.
              }
              throw new StoreUnavailableException(
                  "claim of "
                      + request.id()
                      + " on "
                      + dialect.table
                      + " did not settle after "
                      + MAX_CLAIM_ROUNDS
                      + " rounds of concurrent changes");
            });
    if (result instanceof ClaimResult.Claimed c && c.stolen()) {
      feed.changed(request.id());
    }
    return result;
  }

  private static boolean claimable(IdempotencyRecord r, ClaimRequest request) {
    return !r.expiresAt().isAfter(r.observedAt())
        || (r.isStealable() && r.fingerprint().equals(request.fingerprint()));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    Objects.requireNonNull(id, "id");
    return run(
        "get",
        session -> {
          try (PreparedStatement ps = session.prepare(sql.get)) {
            Rows.bindId(ps, 1, id);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() ? Optional.of(Rows.record(id, rs, dialect)) : Optional.empty();
            }
          }
        });
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    Arguments.positive("lease", lease);
    return update(
        "heartbeat",
        sql.heartbeat,
        id,
        token,
        ps -> {
          ps.setLong(1, micros(lease));
          ps.setLong(2, micros(lease));
          return 3;
        });
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    HeldLeases held = HeldLeases.of(leases);
    Arguments.positive("lease", lease);
    if (held.isEmpty()) {
      return Set.of();
    }
    return run(
        "heartbeat of " + held.size() + " leases",
        session -> dialect.heartbeat(session, sql, held, micros(lease)));
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    Objects.requireNonNull(recoveryPoint, "recoveryPoint");
    Arguments.positive("lease", lease);
    return update(
        "checkpoint",
        sql.checkpoint,
        id,
        token,
        ps -> {
          ps.setBytes(1, recoveryPoint);
          ps.setLong(2, micros(lease));
          ps.setLong(3, micros(lease));
          return 4;
        });
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return finish("complete", RecordState.COMPLETED, id, token, result, ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return finish("failFinal", RecordState.FAILED_FINAL, id, token, result, ttl);
  }

  private boolean finish(
      String op, RecordState state, RecordId id, long token, byte[] result, Duration ttl) {
    Objects.requireNonNull(result, "result");
    Arguments.positive("ttl", ttl);
    boolean done =
        update(
            op,
            sql.finish,
            id,
            token,
            ps -> {
              ps.setString(1, state.name());
              ps.setBytes(2, result);
              ps.setLong(3, micros(ttl));
              return 4;
            });
    if (done) {
      feed.changed(id);
    }
    return done;
  }

  @Override
  public boolean release(RecordId id, long token) {
    boolean done = update("release", sql.release, id, token, ps -> 1);
    if (done) {
      feed.changed(id);
    }
    return done;
  }

  @Override
  public int purgeExpired(int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, was " + batchSize);
    }
    return run("purgeExpired", session -> dialect.purge(session, batchSize));
  }

  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    return feed.await(id);
  }

  @Override
  public boolean notifiesChanges() {
    return feed.notifies();
  }

  /** Runs one fenced single-statement transition; the binder fills the leading parameters. */
  private boolean update(String op, String statement, RecordId id, long token, Binder binder) {
    Objects.requireNonNull(id, "id");
    return run(
        op,
        session -> {
          int changed;
          try (PreparedStatement ps = session.prepare(statement)) {
            int next = Rows.bindId(ps, binder.bind(ps), id);
            ps.setLong(next, token);
            changed = ps.executeUpdate();
          }
          session.commitIfOwned();
          return changed == 1;
        });
  }

  private <T> T run(String op, Session.SqlWork<T> work) {
    TransactionControl control = connections.control();
    for (int attempt = 1; ; attempt++) {
      Connection connection;
      try {
        connection = connections.open();
      } catch (SQLException e) {
        throw Failures.unavailable(op, dialect.table, e);
      }
      T result;
      try {
        result = work.run(new Session(connection, timeoutSeconds, control));
      } catch (SQLException e) {
        connections.release(connection, e);
        boolean retry =
            control != TransactionControl.CALLER
                && attempt < MAX_TRANSACTION_ATTEMPTS
                && dialect.isRetryable(e);
        if (!retry) {
          throw Failures.unavailable(op, dialect.table, e);
        }
        continue;
      } catch (RuntimeException | Error e) {
        connections.release(connection, e instanceof Exception x ? x : null);
        throw e;
      }
      try {
        // With a group commit, this waits until a commit covering the operation is durable.
        connections.done(connection);
      } catch (SQLException e) {
        throw Failures.unavailable(op, dialect.table, e);
      }
      return result;
    }
  }

  static long micros(Duration d) {
    try {
      return Math.addExact(Math.multiplyExact(d.getSeconds(), 1_000_000L), d.getNano() / 1_000);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("duration " + d + " is too long for the store", e);
    }
  }

  @FunctionalInterface
  private interface Binder {
    /** Binds the leading parameters and returns the index of the first (scope, key) parameter. */
    int bind(PreparedStatement ps) throws SQLException;
  }
}

package dev.once.store.jdbc;

import dev.once.Fingerprint;
import dev.once.internal.Arguments;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The store contract over JDBC, written once: each operation runs the dialect's SQL with a query
 * timeout on a connection of its {@link Connections}, and maps failures to {@link
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
    return claimCall(request).block();
  }

  Call<ClaimResult> claimCall(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    return new Call<>(
        "claim",
        session -> claim(session, request),
        result -> {
          if (result instanceof ClaimResult.Claimed c && c.stolen()) {
            feed.changed(request.id());
          }
          return result;
        });
  }

  /** One claim on the session: the dialect's statement, run again until it settles. */
  private ClaimResult claim(Session session, ClaimRequest request) throws SQLException {
    for (int round = 0; round < MAX_CLAIM_ROUNDS; round++) {
      ClaimRow row = dialect.claim(session, request);
      if (row.claimed()) {
        IdempotencyRecord r =
            Objects.requireNonNull(row.record(), "a claimed row carries its record");
        return ClaimRow.lease(r.token(), r.leaseUntil(), row.attempt(), r.recoveryPoint());
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
  }

  /**
   * {@inheritDoc}
   *
   * <p>One transaction, one commit (one log flush instead of one per record). Where the dialect
   * can, the records that do not exist yet (a consumer's new messages) are claimed first in a few
   * statements whatever their number ({@link Dialect#claimMany}); the rest one claim each. The
   * records are claimed in one fixed order, by scope then key, whatever the request order: every
   * claim takes its key's locks (PostgreSQL's advisory lock, then the row) as it runs and holds
   * them to the commit, so two batches over overlapping keys take them in the same order and cannot
   * deadlock. If the transaction fails, it rolls back; if the commit's answer is what was lost, the
   * claims may have committed, so they are given back ({@link #giveBackUnused}: a fresh one
   * released, a stolen one's lease ended). Both are fenced by the claim's token, so giving back a
   * claim that never committed changes nothing.
   */
  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    requests.forEach(r -> Objects.requireNonNull(r, "request"));
    if (requests.isEmpty()) {
      return List.of();
    }
    RecordId.requireDistinct(requests, ClaimRequest::id, "claims");
    Integer[] order = inKeyOrder(requests, ClaimRequest::id);
    ClaimResult[] results = new ClaimResult[requests.size()];
    try {
      run(
          "claim of " + requests.size() + " records",
          session ->
              session.atomically(
                  tx -> {
                    // A deadlock retry starts the transaction again: forget the rolled-back one.
                    Arrays.fill(results, null);
                    Session each = tx.joined();
                    List<ClaimRequest> sorted = new ArrayList<>(order.length);
                    for (int i : order) {
                      sorted.add(requests.get(i));
                    }
                    // A lone record gains nothing from it, and one that exists (a replay) would
                    // pay a statement more.
                    ClaimResult.Claimed[] many =
                        sorted.size() > 1 ? dialect.claimMany(each, sorted) : null;
                    IdempotencyRecord[] found = many != null ? rest(each, sorted, many) : null;
                    for (int k = 0; k < order.length; k++) {
                      int i = order[k];
                      IdempotencyRecord r = found != null ? found[k] : null;
                      if (many != null && many[k] != null) {
                        results[i] = many[k];
                      } else if (r != null && !claimable(r, sorted.get(k))) {
                        results[i] = new ClaimResult.Existing(r);
                      } else {
                        results[i] = claim(each, requests.get(i));
                      }
                    }
                    return results;
                  }));
    } catch (RuntimeException e) {
      for (int i = 0; i < results.length; i++) {
        if (results[i] instanceof ClaimResult.Claimed c) {
          try {
            giveBackUnused(requests.get(i).id(), c);
          } catch (RuntimeException giveBackFailure) {
            e.addSuppressed(giveBackFailure);
          }
        }
      }
      throw e;
    }
    for (int i = 0; i < results.length; i++) {
      if (results[i] instanceof ClaimResult.Claimed c && c.stolen()) {
        feed.changed(requests.get(i).id());
      }
    }
    return Arrays.asList(results);
  }

  /**
   * The records of a batch's requests that {@link Dialect#claimMany} did not grant, read in one
   * statement, in the batch's order ({@code null} for those it granted, or that have none): a
   * record no claim could take (a replay, a lease in flight, another fingerprint) is answered as
   * read, as the single claim would answer it, and only the rest are claimed one by one. So a batch
   * of replays is two statements, not one a record.
   */
  private IdempotencyRecord[] rest(
      Session session, List<ClaimRequest> sorted, ClaimResult.Claimed[] granted)
      throws SQLException {
    List<RecordId> ids = new ArrayList<>();
    List<Integer> at = new ArrayList<>();
    for (int k = 0; k < sorted.size(); k++) {
      if (granted[k] == null) {
        ids.add(sorted.get(k).id());
        at.add(k);
      }
    }
    IdempotencyRecord[] found = new IdempotencyRecord[sorted.size()];
    if (ids.isEmpty()) {
      return found;
    }
    IdempotencyRecord[] read = dialect.readMany(session, ids);
    for (int j = 0; j < read.length; j++) {
      found[at.get(j)] = read[j];
    }
    return found;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One transaction: the dialect's multi-row statements where it has them ({@link
   * Dialect#finishAll}); otherwise the completions and final failures as one JDBC batch of {@link
   * Statements#finish}, the releases as one of {@link Statements#release}, each in key order (a
   * driver such as pgjdbc sends a batch in one round trip); then one commit. Two batches that lock
   * the same records in different groups may still deadlock; the database breaks it and the
   * transaction runs again, as any transaction here does.
   */
  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    finishes.forEach(f -> Objects.requireNonNull(f, "finish"));
    if (finishes.isEmpty()) {
      return List.of();
    }
    RecordId.requireDistinct(finishes, Finish::id, "finishing writes");
    Integer[] order = inKeyOrder(finishes, Finish::id);
    boolean[] applied = new boolean[finishes.size()];
    run(
        "finish of " + finishes.size() + " records",
        session ->
            session.atomically(
                tx -> {
                  List<Finish> sorted = new ArrayList<>(order.length);
                  for (int i : order) {
                    sorted.add(finishes.get(i));
                  }
                  boolean[] many = dialect.finishAll(tx, sorted);
                  if (many != null) {
                    for (int k = 0; k < order.length; k++) {
                      applied[order[k]] = many[k];
                    }
                    return applied;
                  }
                  try (PreparedStatement finish = tx.prepare(sql.finish);
                      PreparedStatement release = tx.prepare(sql.release)) {
                    List<Integer> finished = new ArrayList<>();
                    List<Integer> released = new ArrayList<>();
                    for (int i : order) {
                      Finish f = finishes.get(i);
                      int next = 1;
                      PreparedStatement ps = release;
                      if (f.kind() == Finish.Kind.RELEASE) {
                        released.add(i);
                      } else {
                        ps = finish;
                        ps.setString(1, stateOf(f.kind()).name());
                        ps.setBytes(2, f.payload());
                        ps.setLong(3, micros(f.ttl()));
                        next = 4;
                        finished.add(i);
                      }
                      ps.setLong(Rows.bindId(ps, next, f.id()), f.token());
                      ps.addBatch();
                    }
                    record(finish, finished, applied);
                    record(release, released, applied);
                  }
                  return applied;
                }));
    List<Boolean> answers = new ArrayList<>(applied.length);
    for (int i = 0; i < applied.length; i++) {
      if (applied[i]) {
        feed.changed(finishes.get(i).id());
      }
      answers.add(applied[i]);
    }
    return answers;
  }

  private static RecordState stateOf(Finish.Kind kind) {
    return switch (kind) {
      case COMPLETE -> RecordState.COMPLETED;
      case FAIL_FINAL -> RecordState.FAILED_FINAL;
      case RELEASE -> throw new IllegalArgumentException("a release sets no state");
    };
  }

  /** Runs the batch of {@code ps}, whose rows belong to {@code items} in order, and notes each. */
  private static void record(PreparedStatement ps, List<Integer> items, boolean[] applied)
      throws SQLException {
    if (items.isEmpty()) {
      return;
    }
    int[] counts = updateCounts(ps, items.size());
    for (int k = 0; k < counts.length; k++) {
      applied[items.get(k)] = counts[k] > 0;
    }
  }

  /** Runs the batch of {@code ps}, {@code rows} rows, and answers each row's update count. */
  static int[] updateCounts(PreparedStatement ps, int rows) throws SQLException {
    int[] counts = ps.executeBatch();
    if (counts.length != rows) {
      throw new SQLException(
          "the driver answered " + counts.length + " update counts for " + rows + " rows");
    }
    for (int count : counts) {
      if (count == java.sql.Statement.SUCCESS_NO_INFO) {
        // Without counts the answer would be a guess; a driver configured so cannot batch here.
        throw new SQLException("the driver answered a batch without update counts");
      }
    }
    return counts;
  }

  /**
   * The indexes of {@code items} sorted by record, scope then key: the one order every batch takes
   * its locks in.
   */
  private static <T> Integer[] inKeyOrder(List<T> items, Function<T, RecordId> id) {
    Integer[] order = new Integer[items.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparing((Integer i) -> id.apply(items.get(i)), BY_KEY));
    return order;
  }

  private static final Comparator<RecordId> BY_KEY =
      Comparator.comparing((RecordId r) -> r.scope().value()).thenComparing(r -> r.key().value());

  private static boolean claimable(IdempotencyRecord r, ClaimRequest request) {
    return !r.expiresAt().isAfter(r.observedAt())
        || (r.isStealable() && r.fingerprint().equals(request.fingerprint()));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return getCall(id).block();
  }

  Call<Optional<IdempotencyRecord>> getCall(RecordId id) {
    Objects.requireNonNull(id, "id");
    return new Call<>(
        "get",
        session -> {
          try (PreparedStatement ps = session.prepare(sql.get)) {
            Rows.bindId(ps, 1, id);
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next() ? Optional.of(Rows.record(id, rs, dialect)) : Optional.empty();
            }
          }
        },
        found -> found);
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
    return finishCall(RecordState.COMPLETED, id, token, result, ttl).block();
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return finishCall(RecordState.FAILED_FINAL, id, token, result, ttl).block();
  }

  /** {@link #complete} or {@link #failFinal}, as {@code state} says. */
  Call<Boolean> finishCall(
      RecordState state, RecordId id, long token, byte[] result, Duration ttl) {
    Objects.requireNonNull(result, "result");
    Arguments.positive("ttl", ttl);
    return changing(
        id,
        updateCall(
            state == RecordState.COMPLETED ? "complete" : "failFinal",
            sql.finish,
            id,
            token,
            ps -> {
              ps.setString(1, state.name());
              ps.setBytes(2, result);
              ps.setLong(3, micros(ttl));
              return 4;
            }));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return releaseCall(id, token).block();
  }

  Call<Boolean> releaseCall(RecordId id, long token) {
    return changing(id, updateCall("release", sql.release, id, token, ps -> 1));
  }

  /** {@code call}, telling waiters on {@code id} once it changed the record. */
  private Call<Boolean> changing(RecordId id, Call<Boolean> call) {
    return new Call<>(
        call.name,
        call.work,
        done -> {
          if (done) {
            feed.changed(id);
          }
          return done;
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: one fenced {@code UPDATE} of the lease's end ({@link Dialect#endLease}); waiters are
   * told, on PostgreSQL by a notification the update sends, in the embedded store in process.
   */
  @Override
  public boolean endLease(RecordId id, long token) {
    return endLeaseCall(id, token).block();
  }

  Call<Boolean> endLeaseCall(RecordId id, long token) {
    Objects.requireNonNull(id, "id");
    return changing(
        id, new Call<>("endLease", session -> dialect.endLease(session, sql, id, token), d -> d));
  }

  @Override
  public int purgeExpired(int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, was " + batchSize);
    }
    return run("purgeExpired", session -> dialect.purge(session, batchSize));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: one statement over the in-flight index ({@code V2__once_records_in_flight.sql}), in
   * creation order, reading at most {@code limit} + {@value #IN_FLIGHT_EXPIRED_BUDGET} rows.
   * Expired in-progress rows (abandoned work not yet purged) are read and dropped; when more of
   * them than that budget sit among the oldest, the answer is incomplete.
   */
  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    InFlight.check(olderThan, limit);
    long budget = (long) limit + IN_FLIGHT_EXPIRED_BUDGET;
    return run(
        "inFlight",
        session -> {
          List<IdempotencyRecord> found = new ArrayList<>();
          int read = 0;
          try (PreparedStatement ps = session.prepare(sql.inFlight)) {
            ps.setLong(1, -micros(olderThan));
            ps.setLong(2, budget);
            try (ResultSet rs = ps.executeQuery()) {
              while (found.size() < limit && rs.next()) {
                read++;
                if (rs.getBoolean("live")) {
                  found.add(inFlightRecord(rs));
                }
              }
            }
          }
          return new InFlight(found, found.size() == limit || read < budget);
        });
  }

  /** Expired in-progress rows one listing may read past, besides the records it returns. */
  static final int IN_FLIGHT_EXPIRED_BUDGET = 1_000;

  private static final byte[] NO_BYTES = new byte[0];

  private IdempotencyRecord inFlightRecord(ResultSet rs) throws SQLException {
    return new IdempotencyRecord(
        Rows.id(rs),
        RecordState.valueOf(rs.getString("state")),
        Fingerprint.parse(rs.getString("fingerprint")),
        rs.getLong("token"),
        dialect.time(rs, "lease_until"),
        dialect.time(rs, "expires_at"),
        rs.getBoolean("has_recovery_point") ? NO_BYTES : null,
        null,
        dialect.time(rs, "observed_at"),
        dialect.time(rs, "created_at"));
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
    return updateCall(op, statement, id, token, binder).block();
  }

  private Call<Boolean> updateCall(
      String op, String statement, RecordId id, long token, Binder binder) {
    Objects.requireNonNull(id, "id");
    return new Call<>(
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
        },
        done -> done);
  }

  private <T> T run(String op, Session.SqlWork<T> work) {
    boolean retries = connections.control() != TransactionControl.CALLER;
    for (int attempt = 1; ; attempt++) {
      try {
        return connections.run(work, timeoutSeconds);
      } catch (SQLException e) {
        if (!(retries && attempt < MAX_TRANSACTION_ATTEMPTS && dialect.isRetryable(e))) {
          throw Failures.unavailable(op, dialect.table, e);
        }
      }
    }
  }

  /**
   * One operation, written once for both APIs: its work on a connection, and what follows once that
   * work is durable (telling waiters).
   */
  final class Call<T> {
    private final String name;
    private final Session.SqlWork<T> work;
    private final UnaryOperator<T> then;

    Call(String name, Session.SqlWork<T> work, UnaryOperator<T> then) {
      this.name = name;
      this.work = work;
      this.then = then;
    }

    /** Runs the operation on the calling thread. */
    T block() {
      return then.apply(run(name, work));
    }

    /**
     * Queues the operation for {@code writer} and goes on with its answer on {@code answers}: the
     * caller's executor, so that nothing the caller chains runs on the writer's thread, or one that
     * runs it at once, on the writer, for a store built to answer there. If {@code answers}
     * refuses, the operation has run but its caller cannot go on: its outcome is unknown, told as
     * the store being unavailable, and still off the writer's thread (on the common pool).
     */
    CompletionStage<T> start(EmbeddedConnection writer, Executor answers) {
      CompletableFuture<T> answer = new CompletableFuture<>();
      writer
          .submit(work)
          .whenComplete(
              (value, failure) -> {
                try {
                  answers.execute(() -> settle(answer, value, failure));
                } catch (RejectedExecutionException e) {
                  ForkJoinPool.commonPool()
                      .execute(
                          () ->
                              answer.completeExceptionally(
                                  new StoreUnavailableException(
                                      "no thread free to go on after the store answered "
                                          + name
                                          + "; its outcome is unknown",
                                      e)));
                }
              });
      return answer;
    }

    private void settle(
        CompletableFuture<T> answer, @Nullable T value, @Nullable Throwable failure) {
      try {
        if (failure == null) {
          answer.complete(then.apply(value));
        } else if (failure instanceof SQLException e) {
          answer.completeExceptionally(Failures.unavailable(name, dialect.table, e));
        } else {
          answer.completeExceptionally(failure);
        }
      } catch (RuntimeException | Error e) {
        answer.completeExceptionally(e);
      }
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

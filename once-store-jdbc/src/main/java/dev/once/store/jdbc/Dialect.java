package dev.once.store.jdbc;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.jdbc.support.TableName;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What differs between databases: the clock and time arithmetic in SQL, how times are read, the
 * atomic claim primitive, the purge statement and the schema file. Everything else (the fenced
 * transitions, reads, error handling) is written once in {@link JdbcOperations} on top of these.
 *
 * <p>A dialect instance is bound to one table, so its SQL is built once.
 */
abstract class Dialect {

  /** The columns every read returns, in the names {@link Rows} reads them by. */
  static final String RECORD_COLUMNS =
      "state, fingerprint, token, attempt, lease_until, expires_at, recovery_point, result,"
          + " created_at";

  final TableName table;

  Dialect(TableName table) {
    this.table = table;
  }

  /**
   * Short name, also the folder of the schema file: {@code db/once/<name>/V1__once_records.sql}.
   */
  abstract String name();

  /** An SQL expression for the store's clock. */
  abstract String now();

  /**
   * An SQL expression for the store's clock that the database reads once per statement, so that an
   * index range can be bounded by it (a volatile clock is only a filter, checked row by row). By
   * default {@link #now()}, which is that already.
   */
  String statementNow() {
    return now();
  }

  /** An SQL expression for {@code time} plus a bind parameter given in microseconds. */
  abstract String plusMicros(String time);

  /** An SQL expression for the later of two times. */
  String greatest(String a, String b) {
    return "GREATEST(" + a + ", " + b + ")";
  }

  /** Reads a time column written by this dialect. */
  abstract Instant time(ResultSet rs, String column) throws SQLException;

  /**
   * The atomic claim: grants a lease on an absent, expired or (same fingerprint) stale record and
   * reads back the outcome, or changes nothing and reads back the record that is there.
   */
  abstract ClaimRow claim(Session session, ClaimRequest request) throws SQLException;

  /**
   * Claims many records in a few statements whatever their number, within the caller's transaction:
   * at least those of {@code requests} whose records do not exist, taking the same locks as {@link
   * #claim} would one by one, in the order given, and granting what it would. Answers per request,
   * in order, the lease it granted or {@code null} where it granted none (the caller claims that
   * one with {@link #claim}, which sees what is there); or answers {@code null} altogether where
   * the database has no such statements, as by default.
   */
  ClaimResult.Claimed @Nullable [] claimMany(Session session, List<ClaimRequest> requests)
      throws SQLException {
    return null;
  }

  /**
   * Applies {@code finishes} (distinct records) within the caller's transaction in as few
   * statements as the database allows, each as {@link Statements#finish} or {@link
   * Statements#release} would alone, and answers per finish, in order, whether it applied; or
   * answers {@code null} where the database has no multi-row statements for them, as by default
   * (the caller then sends the single statements as one JDBC batch).
   */
  boolean @Nullable [] finishAll(Session session, List<Finish> finishes) throws SQLException {
    return null;
  }

  /** How long a claimed record lives: its ttl, but at least as long as its lease. */
  static java.time.Duration lifetime(ClaimRequest request) {
    return request.ttl().compareTo(request.lease()) >= 0 ? request.ttl() : request.lease();
  }

  /**
   * Ends the lease on {@code id} if {@code token} holds it ({@link Statements#endLease}); whether
   * it did. The change triggers fire on a new state or token only, so a dialect whose waiters on
   * other nodes hear of changes announces this one itself.
   */
  boolean endLease(Session session, Statements sql, RecordId id, long token) throws SQLException {
    int changed;
    try (PreparedStatement ps = session.prepare(sql.endLease)) {
      ps.setLong(Rows.bindId(ps, 1, id), token);
      changed = ps.executeUpdate();
    }
    session.commitIfOwned();
    return changed == 1;
  }

  /**
   * The batched heartbeat: extends every lease of {@code leases} still held, as {@link
   * Statements#heartbeat} extends one, and returns those it extended. One {@code UPDATE … FROM
   * <lease rows> … RETURNING} per {@link #leasesPerStatement()} leases; the statements need not be
   * atomic together, since a caller whose call fails counts none as extended.
   */
  Set<LeaseToken> heartbeat(Session session, Statements sql, HeldLeases leases, long leaseMicros)
      throws SQLException {
    Set<LeaseToken> extended = new HashSet<>(leases.size() * 2);
    for (List<LeaseToken> chunk : leases.chunks(leasesPerStatement())) {
      try (PreparedStatement ps = session.prepare(sql.heartbeatEach(leaseRows(chunk.size())))) {
        ps.setLong(1, leaseMicros);
        ps.setLong(2, leaseMicros);
        bindLeases(session, ps, 3, chunk);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            extended.add(leases.named(rs.getString(1), rs.getString(2)));
          }
        }
      }
    }
    session.commitIfOwned();
    return extended;
  }

  /**
   * Leases per batched heartbeat statement, three bind parameters each: 5,000 keeps a statement
   * under the 32,766 parameters SQLite allows (and PostgreSQL's 32,767).
   */
  int leasesPerStatement() {
    return 5_000;
  }

  /**
   * A derived table {@code h(h_scope, h_key, h_token)} of {@code n} leases given as parameters; by
   * default a {@code VALUES} list, whose columns PostgreSQL and SQLite both name {@code column1…}.
   */
  String leaseRows(int n) {
    return "(SELECT column1 AS h_scope, column2 AS h_key, column3 AS h_token FROM (VALUES "
        + tuples(n, 3)
        + ")) AS h";
  }

  /**
   * Binds {@code leases} to the parameters of {@link #leaseRows} from {@code index}: scope, key,
   * token each.
   */
  void bindLeases(Session session, PreparedStatement ps, int index, List<LeaseToken> leases)
      throws SQLException {
    for (LeaseToken lease : leases) {
      index = Rows.bindId(ps, index, lease.id());
      ps.setLong(index++, lease.token());
    }
  }

  /**
   * The tail of a statement on {@code table} naming {@code n} records by their primary key, bound
   * with {@link Rows#bindId} in order: {@code WHERE (scope, idem_key) IN ((?, ?), …)}.
   */
  String rowsNamed(int n) {
    return " WHERE (scope, idem_key) IN (" + tuples(n, 2) + ")";
  }

  /**
   * The records of {@code ids} (distinct) as they stand, read in one statement without a lock, in
   * the order given: {@code null} where there is none.
   */
  final IdempotencyRecord[] readMany(Session session, List<RecordId> ids) throws SQLException {
    Map<RecordId, Integer> index = new HashMap<>(ids.size() * 2);
    for (int i = 0; i < ids.size(); i++) {
      index.put(ids.get(i), i);
    }
    IdempotencyRecord[] found = new IdempotencyRecord[ids.size()];
    try (PreparedStatement ps = prepareReadMany(session, ids);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        RecordId id = Rows.id(rs);
        found[Objects.requireNonNull(index.get(id), "a record was read that was not asked for")] =
            Rows.record(id, rs, this);
      }
    }
    return found;
  }

  /**
   * The statement of {@link #readMany}, bound: {@code scope}, {@code idem_key}, {@link
   * #RECORD_COLUMNS} and {@code observed_at} of each record that exists.
   */
  PreparedStatement prepareReadMany(Session session, List<RecordId> ids) throws SQLException {
    PreparedStatement ps =
        session.prepare(
            "SELECT scope, idem_key, "
                + RECORD_COLUMNS
                + ", "
                + now()
                + " AS observed_at FROM "
                + table.qualified()
                + rowsNamed(ids.size()));
    try {
      int i = 1;
      for (RecordId id : ids) {
        i = Rows.bindId(ps, i, id);
      }
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  /** {@code n} row constructors of {@code width} parameters: {@code (?, ?), (?, ?)}. */
  static String tuples(int n, int width) {
    String tuple = "(?" + ", ?".repeat(width - 1) + ")";
    StringBuilder sql = new StringBuilder(n * (tuple.length() + 2));
    for (int i = 0; i < n; i++) {
      sql.append(i == 0 ? "" : ", ").append(tuple);
    }
    return sql.toString();
  }

  /** A statement deleting up to {@code ?} expired records, oldest first, without long locks. */
  abstract String purgeSql();

  /** Deletes up to {@code batchSize} expired records in one short transaction. */
  int purge(Session session, int batchSize) throws SQLException {
    int deleted;
    try (java.sql.PreparedStatement ps = session.prepare(purgeSql())) {
      ps.setInt(1, batchSize);
      deleted = ps.executeUpdate();
    }
    session.commitIfOwned();
    return deleted;
  }

  /**
   * The classpath resources of the versioned schema files, in the order they apply: the table, then
   * the in-flight listing's index (added later, so a schema created by V1 alone gains it). Every
   * statement in them is safe to run again.
   */
  final List<String> migrations() {
    return List.of(
        "db/once/" + name() + "/V1__once_records.sql",
        "db/once/" + name() + "/V2__once_records_in_flight.sql");
  }

  /**
   * A statement that serialises concurrent schema creation for the rest of the transaction, or
   * {@code null} where the schema file is safe to run concurrently as it stands.
   */
  @Nullable String schemaLock() {
    return null;
  }

  /**
   * Whether the statement failed because of a lock conflict the database resolved by aborting it
   * (deadlock, serialization failure), so running it again in a new transaction may succeed.
   */
  boolean isRetryable(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.equals("40001") || state.equals("40P01"));
  }
}

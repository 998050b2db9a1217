package dev.once.store.jdbc;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.jdbc.support.TableName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL: the claim is one statement, one round trip.
 *
 * <p>Time is {@code clock_timestamp()}, the database's wall clock when the statement runs, not
 * {@code now()}: in transactional mode {@code now()} is the start of the caller's transaction,
 * which may be seconds old, and would shorten leases and misjudge whether a lease has ended. The
 * claim reads the clock once (the {@code clk} CTE) so every comparison in it agrees.
 *
 * <p>The claim is {@code INSERT … ON CONFLICT DO UPDATE … WHERE <claimable> RETURNING}, with a
 * fallback {@code SELECT} of the existing row in the same statement for when the update does not
 * fire. The fallback reads the statement's snapshot; when the conflicting row was committed after
 * that snapshot was taken (a concurrent claim, or the caller's transaction blocking on the unique
 * index until another commits), it sees an older version or nothing. {@link JdbcOperations} then
 * runs the claim again, which takes a fresh snapshot; an unfired {@code ON CONFLICT} row lock is
 * held until the transaction ends, so nothing is lost in between.
 *
 * <p>Tokens grow in the order leases are granted on a key. A fresh record's token is drawn in the
 * {@code INSERT}'s values, before the conflict check, and that check may wait for another
 * transaction holding the key; a claim and a release committed meanwhile would then get a larger
 * token than the lease this insert grants after them. So the claim first takes a transaction-level
 * advisory lock on the key (the {@code lk} CTE, which the clock and so the insert depend on): every
 * claim of a key draws its token holding that lock, after every earlier claim's transaction ended.
 * It costs no round trip, and in transactional mode it lasts as long as the row lock would anyway.
 *
 * <p>A retry of a finished request takes neither lock: the advisory lock is only taken when the
 * statement's snapshot holds no live outcome for the key, so a replay is a read. Outcomes only ever
 * change by expiring, so an outcome in the snapshot is the one to replay; when the snapshot is too
 * old to hold one committed since, the locking path runs and returns it as before.
 */
final class PostgresDialect extends Dialect {

  private final String claim;
  private final String claimMany;
  private final String readMany;
  private final String finishAll;
  private final String releaseAll;
  private final String purge;

  PostgresDialect(TableName table) {
    super(table);
    String t = table.qualified();
    String expired = "r.expires_at <= EXCLUDED.created_at";
    String returned =
        "r.state, r.fingerprint, r.token, r.attempt, r.lease_until, r.expires_at, r.recovery_point, r.result,"
            + " r.created_at";
    String lockKey = lockKey(t, "?", "?");
    String done = done(t, "?", "?");
    claim =
        "WITH lk AS (SELECT pg_advisory_xact_lock("
            + lockKey
            + ") WHERE NOT EXISTS "
            + done
            + "),"
            + " clk AS (SELECT clock_timestamp() AS ts FROM lk),"
            + " claimed AS ("
            + "INSERT INTO "
            + t
            + " AS r (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at, created_at)"
            + " SELECT ?, ?, '"
            + RecordState.IN_PROGRESS
            + "', ?, nextval('"
            + t
            + "_seq'), 1,"
            + " ts + ? * interval '1 microsecond', ts + ? * interval '1 microsecond', ts FROM clk"
            + " ON CONFLICT (scope, idem_key) DO UPDATE SET"
            + " state = EXCLUDED.state,"
            + " fingerprint = EXCLUDED.fingerprint,"
            // A token drawn now, under the row lock, not the one drawn before the conflict: it is
            // then larger than the token of every earlier lease on this row, even one granted while
            // waiting.
            + " token = nextval('"
            + t
            + "_seq'),"
            + " attempt = CASE WHEN "
            + expired
            + " THEN 1 ELSE r.attempt + 1 END,"
            + " lease_until = EXCLUDED.lease_until,"
            + " expires_at = GREATEST(r.expires_at, EXCLUDED.expires_at),"
            + " recovery_point = CASE WHEN "
            + expired
            + " THEN NULL ELSE r.recovery_point END,"
            + " result = NULL,"
            + " created_at = CASE WHEN "
            + expired
            + " THEN EXCLUDED.created_at ELSE r.created_at END,"
            // Waiters of an expired record were woken long ago; those of a stolen one wait on.
            + " watched = CASE WHEN "
            + expired
            + " THEN false ELSE r.watched END"
            + " WHERE "
            + expired
            + " OR (r.state = '"
            + RecordState.IN_PROGRESS
            + "' AND r.lease_until <= EXCLUDED.created_at"
            + " AND r.fingerprint = EXCLUDED.fingerprint)"
            + " RETURNING true AS claimed, "
            + returned
            + ")"
            + " SELECT c.*, (SELECT ts FROM clk) AS observed_at FROM claimed c"
            + " UNION ALL"
            + " SELECT false, "
            + returned
            + ", COALESCE((SELECT ts FROM clk), clock_timestamp()) FROM "
            + t
            + " r"
            + " WHERE r.scope = ? AND r.idem_key = ? AND NOT EXISTS (SELECT 1 FROM claimed)";
    // Many new records in one statement. The same advisory locks as the single claim, taken in
    // the order given (the caller's key order), so that its token argument holds row by row; keys
    // with a live outcome take none, like a replay above. ON CONFLICT DO NOTHING leaves every key
    // whose record exists to the single claim, which decides between replay, in-flight and steal;
    // its row is not locked here, and since its advisory lock is held, the single claim that
    // follows sees it committed and unchanged by any other claim.
    String q =
        "(SELECT * FROM unnest(CAST(? AS varchar[]), CAST(? AS varchar[]), CAST(? AS varchar[]),"
            + " CAST(? AS bigint[]), CAST(? AS bigint[])) WITH ORDINALITY"
            + " AS q(scope, idem_key, fingerprint, lease_us, life_us, n))";
    claimMany =
        "WITH q AS "
            + q
            + ", lk AS (SELECT count(pg_advisory_xact_lock("
            + lockKey(t, "o.scope", "o.idem_key")
            + ")) AS locked FROM (SELECT scope, idem_key FROM q WHERE NOT EXISTS "
            + done(t, "q.scope", "q.idem_key")
            + " ORDER BY n) o),"
            + " clk AS (SELECT clock_timestamp() AS ts FROM lk),"
            + " ins AS (INSERT INTO "
            + t
            + " AS r (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at, created_at)"
            + " SELECT q.scope, q.idem_key, '"
            + RecordState.IN_PROGRESS
            + "', q.fingerprint, nextval('"
            + t
            + "_seq'), 1, ts + q.lease_us * interval '1 microsecond',"
            + " ts + q.life_us * interval '1 microsecond', ts FROM q, clk ORDER BY q.n"
            + " ON CONFLICT (scope, idem_key) DO NOTHING"
            + " RETURNING r.scope, r.idem_key, r.token, r.lease_until)"
            // Microseconds since the epoch: exact for a timestamptz, and cheap to read.
            + " SELECT q.n, ins.token, CAST(extract(epoch FROM ins.lease_until) * 1000000 AS bigint)"
            + " AS lease_micros FROM ins JOIN q ON q.scope = ins.scope AND q.idem_key = ins.idem_key";
    // One index probe a record whatever the table's size (LIMIT keeps the planner from turning
    // the lateral read into a join that scans the table), and one statement text for every
    // batch size, so that its plan is cached.
    readMany =
        "SELECT r.scope, r.idem_key, "
            + RECORD_COLUMNS
            + ", "
            + now()
            + " AS observed_at"
            + " FROM unnest(CAST(? AS varchar[]), CAST(? AS varchar[])) AS q(s, k)"
            + " CROSS JOIN LATERAL (SELECT * FROM "
            + t
            + " WHERE scope = q.s AND idem_key = q.k LIMIT 1) r";
    // The rows' columns are named apart from the table's, so that the held condition reads the
    // table's.
    String held = Statements.held(this);
    finishAll =
        "UPDATE "
            + t
            + " SET state = f_state, result = f_result, recovery_point = NULL,"
            + " expires_at = clock_timestamp() + f_ttl * interval '1 microsecond' FROM "
            + finishRows(
                ", CAST(? AS varchar[]), CAST(? AS bytea[]), CAST(? AS bigint[])",
                ", f_state, f_result, f_ttl")
            + " WHERE scope = f_scope AND idem_key = f_key AND token = f_token AND "
            + held
            + " RETURNING n";
    releaseAll =
        "DELETE FROM "
            + t
            + " USING "
            + finishRows("", "")
            + " WHERE scope = f_scope AND idem_key = f_key AND token = f_token AND "
            + held
            + " RETURNING n";
    // By primary key rather than ctid, so it also works on a partitioned table. SKIP LOCKED leaves
    // rows a claim is reviving to that claim; the batch's locks last one short statement.
    purge =
        "DELETE FROM "
            + t
            + " d USING (SELECT scope, idem_key FROM "
            + t
            + " WHERE expires_at <= clock_timestamp() ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED) x"
            + " WHERE d.scope = x.scope AND d.idem_key = x.idem_key";
  }

  /**
   * A key's advisory lock: its hash in PostgreSQL's 64-bit advisory lock space, salted with the
   * table {@code t}; {@code scope} and {@code key} are SQL expressions.
   */
  private static String lockKey(String t, String scope, String key) {
    return "hashtextextended('" + t + "' || chr(10) || " + scope + " || chr(10) || " + key + ", 0)";
  }

  /**
   * Whether the key has a live outcome: a replay's fast path, read without the advisory lock or a
   * row lock, so that retries of one hot key do not queue behind each other.
   */
  private static String done(String t, String scope, String key) {
    return "(SELECT 1 FROM "
        + t
        + " d WHERE d.scope = "
        + scope
        + " AND d.idem_key = "
        + key
        + " AND d.state IN ('"
        + RecordState.COMPLETED
        + "', '"
        + RecordState.FAILED_FINAL
        + "') AND d.expires_at > clock_timestamp())";
  }

  @Override
  String purgeSql() {
    return purge;
  }

  /** Three array parameters whatever the number of leases: one statement for any batch. */
  @Override
  int leasesPerStatement() {
    return Integer.MAX_VALUE;
  }

  @Override
  String leaseRows(int n) {
    return "unnest(CAST(? AS varchar[]), CAST(? AS varchar[]), CAST(? AS bigint[])) AS h(h_scope, h_key, h_token)";
  }

  @Override
  void bindLeases(Session session, PreparedStatement ps, int index, List<LeaseToken> leases)
      throws SQLException {
    String[] scopes = new String[leases.size()];
    String[] keys = new String[leases.size()];
    Long[] tokens = new Long[leases.size()];
    for (int i = 0; i < leases.size(); i++) {
      LeaseToken lease = leases.get(i);
      scopes[i] = lease.id().scope().value();
      keys[i] = lease.id().key().value();
      tokens[i] = lease.token();
    }
    ps.setArray(index, session.connection().createArrayOf("varchar", scopes));
    ps.setArray(index + 1, session.connection().createArrayOf("varchar", keys));
    ps.setArray(index + 2, session.connection().createArrayOf("bigint", tokens));
  }

  @Override
  String name() {
    return "postgresql";
  }

  /**
   * {@inheritDoc} Here the waiters of a record that is {@code watched} are told as its triggers
   * would tell them ({@link PostgresChangeFeed#payload}), delivered when the update commits.
   */
  @Override
  boolean endLease(Session session, Statements sql, RecordId id, long token) throws SQLException {
    boolean watched;
    try (PreparedStatement ps = session.prepare(sql.endLease + " RETURNING watched")) {
      ps.setLong(Rows.bindId(ps, 1, id), token);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          session.commitIfOwned();
          return false;
        }
        watched = rs.getBoolean(1);
      }
    }
    if (watched) {
      try (PreparedStatement ps =
          session.prepare("SELECT pg_notify('" + PostgresChangeFeed.CHANNEL + "', ?)")) {
        ps.setString(1, PostgresChangeFeed.payload(table, id));
        ps.execute();
      }
    }
    session.commitIfOwned();
    return true;
  }

  @Override
  String now() {
    return "clock_timestamp()";
  }

  /**
   * {@code statement_timestamp()}: stable within the statement, so the in-flight listing's cutoff
   * is an index condition; {@code clock_timestamp()} is volatile, and would make it a filter that
   * reads every in-progress row of the index.
   */
  @Override
  String statementNow() {
    return "statement_timestamp()";
  }

  @Override
  String plusMicros(String time) {
    return "(" + time + " + ? * interval '1 microsecond')";
  }

  /**
   * Concurrent CREATE ... IF NOT EXISTS (and CREATE OR REPLACE of the trigger function every table
   * shares) can still collide in the catalog; one advisory lock for all Once tables orders them.
   */
  @Override
  @Nullable String schemaLock() {
    return "SELECT pg_advisory_xact_lock(hashtext('dev.once schema'))";
  }

  @Override
  Instant time(ResultSet rs, String column) throws SQLException {
    return rs.getObject(column, OffsetDateTime.class).toInstant();
  }

  @Override
  ClaimResult.Claimed[] claimMany(Session session, List<ClaimRequest> requests)
      throws SQLException {
    int n = requests.size();
    String[] scopes = new String[n];
    String[] keys = new String[n];
    String[] fingerprints = new String[n];
    Long[] leases = new Long[n];
    Long[] lifetimes = new Long[n];
    for (int i = 0; i < n; i++) {
      ClaimRequest r = requests.get(i);
      scopes[i] = r.id().scope().value();
      keys[i] = r.id().key().value();
      fingerprints[i] = r.fingerprint().encoded();
      leases[i] = JdbcOperations.micros(r.lease());
      lifetimes[i] = JdbcOperations.micros(lifetime(r));
    }
    ClaimResult.Claimed[] claimed = new ClaimResult.Claimed[n];
    try (PreparedStatement ps = session.prepare(claimMany)) {
      Connection c = session.connection();
      ps.setArray(1, c.createArrayOf("varchar", scopes));
      ps.setArray(2, c.createArrayOf("varchar", keys));
      ps.setArray(3, c.createArrayOf("varchar", fingerprints));
      ps.setArray(4, c.createArrayOf("bigint", leases));
      ps.setArray(5, c.createArrayOf("bigint", lifetimes));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long micros = rs.getLong(3);
          claimed[rs.getInt(1) - 1] =
              new ClaimResult.Claimed(
                  rs.getLong(2),
                  Instant.ofEpochSecond(
                      Math.floorDiv(micros, 1_000_000L),
                      Math.floorMod(micros, 1_000_000L) * 1_000L),
                  false,
                  null);
        }
      }
    }
    return claimed;
  }

  @Override
  PreparedStatement prepareReadMany(Session session, List<RecordId> ids) throws SQLException {
    String[] scopes = new String[ids.size()];
    String[] keys = new String[ids.size()];
    for (int i = 0; i < ids.size(); i++) {
      scopes[i] = ids.get(i).scope().value();
      keys[i] = ids.get(i).key().value();
    }
    PreparedStatement ps = session.prepare(readMany);
    try {
      Connection c = session.connection();
      ps.setArray(1, c.createArrayOf("varchar", scopes));
      ps.setArray(2, c.createArrayOf("varchar", keys));
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  /**
   * Completions and final failures in one {@code UPDATE … FROM unnest(…)}, releases in one {@code
   * DELETE … USING unnest(…)}: one statement each whatever the number, fenced row by row as the
   * single statements are.
   */
  @Override
  boolean[] finishAll(Session session, List<Finish> finishes) throws SQLException {
    boolean[] applied = new boolean[finishes.size()];
    List<Integer> finished = new ArrayList<>();
    List<Integer> released = new ArrayList<>();
    for (int i = 0; i < finishes.size(); i++) {
      (finishes.get(i).kind() == Finish.Kind.RELEASE ? released : finished).add(i);
    }
    if (!finished.isEmpty()) {
      int n = finished.size();
      String[] states = new String[n];
      byte[][] results = new byte[n][];
      Long[] ttls = new Long[n];
      for (int k = 0; k < n; k++) {
        Finish f = finishes.get(finished.get(k));
        states[k] =
            (f.kind() == Finish.Kind.COMPLETE ? RecordState.COMPLETED : RecordState.FAILED_FINAL)
                .name();
        results[k] = f.payload();
        ttls[k] = JdbcOperations.micros(f.ttl());
      }
      try (PreparedStatement ps = session.prepare(finishAll)) {
        int next = bindRows(session, ps, finishes, finished);
        Connection c = session.connection();
        ps.setArray(next++, c.createArrayOf("varchar", states));
        ps.setArray(next++, c.createArrayOf("bytea", results));
        ps.setArray(next, c.createArrayOf("bigint", ttls));
        markApplied(ps, finished, applied);
      }
    }
    if (!released.isEmpty()) {
      try (PreparedStatement ps = session.prepare(releaseAll)) {
        bindRows(session, ps, finishes, released);
        markApplied(ps, released, applied);
      }
    }
    return applied;
  }

  /** The finishes' rows: record, token and {@code n} (1-based), then {@code more} columns. */
  private static String finishRows(String moreArrays, String moreColumns) {
    return "unnest(CAST(? AS varchar[]), CAST(? AS varchar[]), CAST(? AS bigint[])"
        + moreArrays
        + ") WITH ORDINALITY AS f(f_scope, f_key, f_token"
        + moreColumns
        + ", n)";
  }

  /** Binds the record and token arrays of {@code items}; answers the next parameter index. */
  private static int bindRows(
      Session session, PreparedStatement ps, List<Finish> finishes, List<Integer> items)
      throws SQLException {
    int n = items.size();
    String[] scopes = new String[n];
    String[] keys = new String[n];
    Long[] tokens = new Long[n];
    for (int k = 0; k < n; k++) {
      Finish f = finishes.get(items.get(k));
      scopes[k] = f.id().scope().value();
      keys[k] = f.id().key().value();
      tokens[k] = f.token();
    }
    Connection c = session.connection();
    ps.setArray(1, c.createArrayOf("varchar", scopes));
    ps.setArray(2, c.createArrayOf("varchar", keys));
    ps.setArray(3, c.createArrayOf("bigint", tokens));
    return 4;
  }

  /** Runs {@code ps} and marks the items whose row number it returned as applied. */
  private static void markApplied(PreparedStatement ps, List<Integer> items, boolean[] applied)
      throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        applied[items.get(rs.getInt(1) - 1)] = true;
      }
    }
  }

  @Override
  ClaimRow claim(Session session, ClaimRequest request) throws SQLException {
    try (PreparedStatement ps = session.prepare(claim)) {
      int i =
          Rows.bindId(
              ps, Rows.bindId(ps, Rows.bindId(ps, 1, request.id()), request.id()), request.id());
      ps.setString(i++, request.fingerprint().encoded());
      ps.setLong(i++, JdbcOperations.micros(request.lease()));
      ps.setLong(i++, JdbcOperations.micros(lifetime(request)));
      Rows.bindId(ps, i, request.id());
      ClaimRow row;
      try (ResultSet rs = ps.executeQuery()) {
        row =
            rs.next()
                ? new ClaimRow(
                    rs.getBoolean("claimed"),
                    rs.getInt("attempt"),
                    Rows.record(request.id(), rs, this))
                : new ClaimRow(false, 0, null);
      }
      session.commitIfOwned();
      return row;
    }
  }
}

package dev.once.store.jdbc;

import dev.once.store.RecordState;

/**
 * The token-fenced transitions and the read, written once for every dialect from its clock and
 * time-arithmetic fragments. Each transition succeeds only while the record is live, in progress,
 * and holds the caller's token: a zombie whose lease was stolen matches no row.
 */
final class Statements {

  final String get;
  final String heartbeat;
  final String checkpoint;
  final String finish;
  final String release;

  /** Ends a held lease now and keeps the row ({@code IdempotencyStore#endLease}). */
  final String endLease;

  /**
   * The in-flight listing's candidates, oldest first by the in-flight index: in-progress rows
   * created at or before now plus the first parameter (minus the bound, in microseconds), at most
   * the second parameter of them, expired ones included (filtered by {@code live}, so that the
   * statement's work is bounded by its limit, not by how many expired rows await purge). Payloads
   * stay in the table: only whether a recovery point exists.
   */
  final String inFlight;

  /** Assignments that extend a lease from now; two parameters, the lease in microseconds twice. */
  final String extendLease;

  /**
   * The condition, besides the token, on rows a lease holder may still write: in progress and live.
   */
  final String held;

  private final String table;

  /** The condition on a row that a lease is held on it, in {@code d}'s clock. */
  static String held(Dialect d) {
    return "state = '" + RecordState.IN_PROGRESS + "' AND expires_at > " + d.now();
  }

  Statements(Dialect d) {
    String t = d.table.qualified();
    String now = d.now();
    table = t;
    held = held(d);
    String fenced = " WHERE scope = ? AND idem_key = ? AND token = ? AND " + held;
    extendLease =
        "lease_until = "
            + d.plusMicros(now)
            + ", expires_at = "
            + d.greatest("expires_at", d.plusMicros(now));
    get =
        "SELECT "
            + Dialect.RECORD_COLUMNS
            + ", "
            + now
            + " AS observed_at FROM "
            + t
            + " WHERE scope = ? AND idem_key = ? AND expires_at > "
            + now;
    heartbeat = "UPDATE " + t + " SET " + extendLease + fenced;
    endLease = "UPDATE " + t + " SET lease_until = " + now + fenced;
    checkpoint = "UPDATE " + t + " SET recovery_point = ?, " + extendLease + fenced;
    // A finished record is never stolen, so its recovery point would only be kept as dead weight
    // (and handed to nobody): it goes with the lease.
    finish =
        "UPDATE "
            + t
            + " SET state = ?, result = ?, recovery_point = NULL, expires_at = "
            + d.plusMicros(now)
            + fenced;
    release = "DELETE FROM " + t + fenced;
    inFlight =
        "SELECT scope, idem_key, state, fingerprint, token, lease_until, expires_at, created_at,"
            + " recovery_point IS NOT NULL AS has_recovery_point, expires_at > "
            + now
            + " AS live, "
            + now
            + " AS observed_at FROM "
            + t
            + " WHERE state = '"
            + RecordState.IN_PROGRESS
            + "' AND created_at <= "
            + d.plusMicros(d.statementNow())
            + " ORDER BY created_at LIMIT ?";
  }

  /**
   * The batched heartbeat: {@link #heartbeat} for every lease in {@code leaseRows}, a derived table
   * {@code h(h_scope, h_key, h_token)} whose parameters follow the two of {@link #extendLease}. It
   * returns the {@code (scope, idem_key)} of every row it extended.
   */
  String heartbeatEach(String leaseRows) {
    return "UPDATE "
        + table
        + " SET "
        + extendLease
        + " FROM "
        + leaseRows
        + " WHERE scope = h_scope AND idem_key = h_key AND token = h_token AND "
        + held
        + " RETURNING scope, idem_key";
  }
}

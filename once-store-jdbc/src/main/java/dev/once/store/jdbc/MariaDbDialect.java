package dev.once.store.jdbc;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.jdbc.support.TableName;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * MariaDB: the claim is {@code INSERT … ON DUPLICATE KEY UPDATE} with conditional assignments, an
 * update that draws the token, then a locking read of the row, all in one transaction.
 *
 * <p>The upsert takes an exclusive lock on the row whether it inserts, updates or leaves it as it
 * is, so what follows sees exactly what the upsert decided, and a concurrent claim waits. The
 * upsert grants the lease by setting the token to {@value #UNDRAWN}, which no sequence value
 * equals: on insert as the value, on a claimable row in the first assignment. Every later
 * assignment applies its change only if the claim fired, tested as "the token now is {@value
 * #UNDRAWN}, or the claim condition holds": the first half is what MariaDB's default left-to-right
 * assignment sees, the second what it sees under {@code SIMULTANEOUS_ASSIGNMENT}, so the statement
 * is right in both modes. Assignments that need the old expiry run before {@code expires_at} is
 * assigned.
 *
 * <p>The token is drawn only then, by an update of the row the upsert left undrawn, under its lock:
 * a token drawn in the insert's values would be drawn before the duplicate check, which may wait
 * for another transaction holding the key, and a claim and a release committed meanwhile would get
 * a larger token than the lease granted after them. The update's row count says whether this claim
 * holds the lease.
 *
 * <p>Times are {@code UTC_TIMESTAMP(6)} in {@code DATETIME(6)} columns: the database's clock, in
 * UTC whatever the session time zone, constant within a statement.
 */
final class MariaDbDialect extends Dialect {

  /**
   * Leases per statement of a batched heartbeat: keeps a statement of long unicode scopes within
   * max_allowed_packet.
   */
  private static final int LEASES_PER_STATEMENT = 2_000;

  /** The token of a lease granted but not yet drawn from the sequence, which starts at 1. */
  private static final int UNDRAWN = 0;

  private final String upsertInto;
  private final String upsertRow;
  private final String upsertAssignments;
  private final String upsert;
  private final String drawToken;
  private final String readBack;
  private final String purge;

  MariaDbDialect(TableName table) {
    super(table);
    String t = table.qualified();
    String now = "VALUES(created_at)";
    String expired = "expires_at <= " + now;
    String claimable =
        "("
            + expired
            + " OR (state = '"
            + RecordState.IN_PROGRESS
            + "' AND lease_until <= "
            + now
            + " AND fingerprint = VALUES(fingerprint)))";
    String fired = "(token = " + UNDRAWN + " OR " + claimable + ")";
    upsertInto =
        "INSERT INTO "
            + t
            + " (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at, created_at)"
            + " VALUES ";
    upsertRow =
        "(?, ?, '"
            + RecordState.IN_PROGRESS
            + "', ?, "
            + UNDRAWN
            + ", 1,"
            + " UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6))";
    upsertAssignments =
        " ON DUPLICATE KEY UPDATE"
            + " token = IF("
            + claimable
            + ", "
            + UNDRAWN
            + ", token),"
            + " attempt = IF("
            + fired
            + ", IF("
            + expired
            + ", 1, attempt + 1), attempt),"
            + " recovery_point = IF("
            + fired
            + " AND "
            + expired
            + ", NULL, recovery_point),"
            + " created_at = IF("
            + fired
            + " AND "
            + expired
            + ", VALUES(created_at), created_at),"
            + " result = IF("
            + fired
            + ", NULL, result),"
            + " state = IF("
            + fired
            + ", VALUES(state), state),"
            + " fingerprint = IF("
            + fired
            + ", VALUES(fingerprint), fingerprint),"
            + " lease_until = IF("
            + fired
            + ", VALUES(lease_until), lease_until),"
            + " expires_at = IF("
            + fired
            + ", GREATEST(expires_at, VALUES(expires_at)), expires_at)";
    upsert = upsertInto + upsertRow + upsertAssignments;
    drawToken =
        "UPDATE "
            + t
            + " SET token = NEXTVAL("
            + t
            + "_seq) WHERE scope = ? AND idem_key = ? AND token = "
            + UNDRAWN;
    readBack =
        "SELECT "
            + RECORD_COLUMNS
            + ", UTC_TIMESTAMP(6) AS observed_at FROM "
            + t
            + " WHERE scope = ? AND idem_key = ? FOR UPDATE";
    purge =
        "DELETE FROM " + t + " WHERE expires_at <= UTC_TIMESTAMP(6) ORDER BY expires_at LIMIT ?";
  }

  @Override
  String purgeSql() {
    return purge;
  }

  /**
   * MariaDB has no {@code UPDATE … RETURNING}, so in one transaction per batch: a locking read
   * finds the leases still held, and an update extends exactly those rows. The lock keeps every
   * other writer off them in between, so what the read found is what the update changes.
   */
  @Override
  Set<LeaseToken> heartbeat(Session session, Statements sql, HeldLeases leases, long leaseMicros)
      throws SQLException {
    String t = table.qualified();
    return session.atomically(
        s -> {
          Set<LeaseToken> extended = new HashSet<>(leases.size() * 2);
          for (List<LeaseToken> chunk : leases.chunks(LEASES_PER_STATEMENT)) {
            List<LeaseToken> held = new ArrayList<>(chunk.size());
            try (PreparedStatement ps =
                s.prepare(
                    "SELECT scope, idem_key FROM "
                        + t
                        + " WHERE (scope, idem_key, token) IN ("
                        + tuples(chunk.size(), 3)
                        + ") AND "
                        + sql.held
                        + " FOR UPDATE")) {
              bindLeases(s, ps, 1, chunk);
              try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                  held.add(leases.named(rs.getString(1), rs.getString(2)));
                }
              }
            }
            if (held.isEmpty()) {
              continue;
            }
            try (PreparedStatement ps =
                s.prepare(
                    "UPDATE "
                        + t
                        + " SET "
                        + sql.extendLease
                        + " WHERE (scope, idem_key) IN ("
                        + tuples(held.size(), 2)
                        + ")")) {
              ps.setLong(1, leaseMicros);
              ps.setLong(2, leaseMicros);
              int i = 3;
              for (LeaseToken lease : held) {
                i = Rows.bindId(ps, i, lease.id());
              }
              ps.executeUpdate();
            }
            extended.addAll(held);
          }
          return extended;
        });
  }

  /**
   * By the primary key, never a scan, which the optimizer may choose for a small table: under
   * SERIALIZABLE a plain read locks what it reads.
   */
  @Override
  String rowsNamed(int n) {
    return " FORCE INDEX (PRIMARY)" + super.rowsNamed(n);
  }

  @Override
  String name() {
    return "mariadb";
  }

  @Override
  String now() {
    return "UTC_TIMESTAMP(6)";
  }

  @Override
  String plusMicros(String time) {
    return "(" + time + " + INTERVAL ? MICROSECOND)";
  }

  @Override
  Instant time(ResultSet rs, String column) throws SQLException {
    return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
  }

  /**
   * The claim below for many records at once, in three round trips whatever their number (a
   * statement a record would cost a round trip each, and a batch across a network would grow slower
   * with its size): the upsert with a row per record, which locks every row in the order given; the
   * single claim's token draw for each record, sent as one JDBC batch, whose update counts say
   * which leases the upsert granted; and one read of those leases. Every statement that locks names
   * its rows by the whole primary key, so what it locks does not depend on the plan (a range read
   * of a small table may scan it all). A record it did not grant is left to the single claim, which
   * reads what is there.
   */
  @Override
  ClaimResult.Claimed[] claimMany(Session session, List<ClaimRequest> requests)
      throws SQLException {
    int n = requests.size();
    try (PreparedStatement ps =
        session.prepare(
            upsertInto + (upsertRow + ", ").repeat(n - 1) + upsertRow + upsertAssignments)) {
      int i = 1;
      for (ClaimRequest request : requests) {
        i = Rows.bindId(ps, i, request.id());
        ps.setString(i++, request.fingerprint().encoded());
        ps.setLong(i++, JdbcOperations.micros(request.lease()));
        ps.setLong(i++, JdbcOperations.micros(lifetime(request)));
      }
      ps.executeUpdate();
    }
    Map<RecordId, Integer> granted = new HashMap<>(n * 2);
    try (PreparedStatement ps = session.prepare(drawToken)) {
      for (ClaimRequest request : requests) {
        Rows.bindId(ps, 1, request.id());
        ps.addBatch();
      }
      int[] drawn = JdbcOperations.updateCounts(ps, n);
      for (int k = 0; k < n; k++) {
        if (drawn[k] > 0) {
          granted.put(requests.get(k).id(), k);
        }
      }
    }
    ClaimResult.Claimed[] claimed = new ClaimResult.Claimed[n];
    if (granted.isEmpty()) {
      return claimed;
    }
    // Rows this transaction changed: a plain read sees them as they are, and takes no lock.
    try (PreparedStatement ps =
        session.prepare(
            "SELECT scope, idem_key, token, attempt, lease_until, recovery_point FROM "
                + table.qualified()
                + rowsNamed(granted.size()))) {
      int i = 1;
      for (RecordId id : granted.keySet()) {
        i = Rows.bindId(ps, i, id);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int k = Objects.requireNonNull(granted.get(Rows.id(rs)), "a granted record was read");
          claimed[k] =
              ClaimRow.lease(
                  rs.getLong("token"),
                  time(rs, "lease_until"),
                  rs.getInt("attempt"),
                  rs.getBytes("recovery_point"));
        }
      }
    }
    for (RecordId id : granted.keySet()) {
      if (claimed[granted.get(id)] == null) {
        throw new SQLException("the lease granted on " + id + " was not read back");
      }
    }
    return claimed;
  }

  @Override
  ClaimRow claim(Session session, ClaimRequest request) throws SQLException {
    return session.atomically(
        s -> {
          try (PreparedStatement ps = s.prepare(upsert)) {
            int i = Rows.bindId(ps, 1, request.id());
            ps.setString(i++, request.fingerprint().encoded());
            ps.setLong(i++, JdbcOperations.micros(request.lease()));
            ps.setLong(i, JdbcOperations.micros(lifetime(request)));
            ps.executeUpdate();
          }
          boolean claimed;
          try (PreparedStatement ps = s.prepare(drawToken)) {
            Rows.bindId(ps, 1, request.id());
            claimed = ps.executeUpdate() == 1;
          }
          try (PreparedStatement ps = s.prepare(readBack)) {
            Rows.bindId(ps, 1, request.id());
            try (ResultSet rs = ps.executeQuery()) {
              return rs.next()
                  ? new ClaimRow(claimed, rs.getInt("attempt"), Rows.record(request.id(), rs, this))
                  : new ClaimRow(false, 0, null);
            }
          }
        });
  }
}

package dev.once.store.jdbc;

import dev.once.store.ClaimRequest;
import dev.once.store.RecordState;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * SQLite, for the embedded store: times are microseconds since the epoch from the SQL function
 * {@code once_now()}, which {@link EmbeddedStore} binds to its clock. The claim draws a token from
 * the counter row and runs {@code INSERT … ON CONFLICT DO UPDATE … WHERE <claimable> RETURNING},
 * reading the row when the update does not fire, all in one transaction. SQLite has one writer at
 * a time and the store one connection, so nothing interleaves.
 */
final class SqliteDialect extends Dialect {

  static final String NOW_FUNCTION = "once_now";

  private final String nextToken;
  private final String upsert;
  private final String existing;
  private final String purge;

  SqliteDialect(TableName table) {
    super(table);
    String t = table.qualified();
    String now = NOW_FUNCTION + "()";
    String expired = "expires_at <= excluded.created_at";
    nextToken = "UPDATE " + t + "_seq SET value = value + 1 WHERE id = 1 RETURNING value";
    upsert = "INSERT INTO " + t
        + " (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at, created_at)"
        + " VALUES (?1, ?2, '" + RecordState.IN_PROGRESS + "', ?3, ?4, 1, ?5 + ?6, ?5 + ?7, ?5)"
        + " ON CONFLICT (scope, idem_key) DO UPDATE SET"
        + " state = excluded.state,"
        + " fingerprint = excluded.fingerprint,"
        + " token = excluded.token,"
        + " attempt = CASE WHEN " + expired + " THEN 1 ELSE attempt + 1 END,"
        + " lease_until = excluded.lease_until,"
        + " expires_at = max(expires_at, excluded.expires_at),"
        + " recovery_point = CASE WHEN " + expired + " THEN NULL ELSE recovery_point END,"
        + " result = NULL,"
        + " created_at = CASE WHEN " + expired + " THEN excluded.created_at ELSE created_at END"
        + " WHERE " + expired
        + " OR (state = '" + RecordState.IN_PROGRESS + "' AND lease_until <= excluded.created_at"
        + " AND fingerprint = excluded.fingerprint)"
        + " RETURNING " + RECORD_COLUMNS + ", ?5 AS observed_at";
    existing = "SELECT " + RECORD_COLUMNS + ", ? AS observed_at FROM " + t + " WHERE scope = ? AND idem_key = ?";
    purge = "DELETE FROM " + t + " WHERE rowid IN (SELECT rowid FROM " + t + " WHERE expires_at <= " + now
        + " ORDER BY expires_at LIMIT ?)";
  }

  @Override
  String name() {
    return "sqlite";
  }

  @Override
  String now() {
    return NOW_FUNCTION + "()";
  }

  @Override
  String plusMicros(String time) {
    return "(" + time + " + ?)";
  }

  @Override
  String greatest(String a, String b) {
    return "max(" + a + ", " + b + ")";
  }

  @Override
  Instant time(ResultSet rs, String column) throws SQLException {
    long micros = rs.getLong(column);
    return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  @Override
  String purgeSql() {
    return purge;
  }

  @Override
  ClaimRow claim(Session session, ClaimRequest request) throws SQLException {
    return session.atomically(s -> {
      long token;
      try (PreparedStatement ps = s.prepare(nextToken); ResultSet rs = ps.executeQuery()) {
        rs.next();
        token = rs.getLong(1);
      }
      long now;
      try (PreparedStatement ps = s.prepare("SELECT " + NOW_FUNCTION + "()"); ResultSet rs = ps.executeQuery()) {
        rs.next();
        now = rs.getLong(1);
      }
      try (PreparedStatement ps = s.prepare(upsert)) {
        Rows.bindId(ps, 1, request.id());
        ps.setString(3, request.fingerprint().encoded());
        ps.setLong(4, token);
        ps.setLong(5, now);
        ps.setLong(6, JdbcOperations.micros(request.lease()));
        ps.setLong(7, JdbcOperations.micros(lifetime(request)));
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return new ClaimRow(true, rs.getInt("attempt"), Rows.record(request.id(), rs, this));
          }
        }
      }
      try (PreparedStatement ps = s.prepare(existing)) {
        ps.setLong(1, now);
        Rows.bindId(ps, 2, request.id());
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next()
              ? new ClaimRow(false, rs.getInt("attempt"), Rows.record(request.id(), rs, this))
              : new ClaimRow(false, 0, null);
        }
      }
    });
  }
}

package dev.once.store.jdbc;

import dev.once.store.ClaimRequest;
import dev.once.store.RecordState;
import dev.once.store.jdbc.support.TableName;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;

/**
 * SQLite, for the embedded store: times are microseconds since the epoch from the SQL function
 * {@code once_now()}, which {@link EmbeddedStore} binds to its clock. The claim runs {@code INSERT
 * … ON CONFLICT DO UPDATE … WHERE <claimable> RETURNING}, reading the row when the update does not
 * fire, in one transaction. SQLite has one writer at a time and the store one connection, whose
 * lock every operation holds, so nothing interleaves.
 *
 * <p>Tokens come from the counter row in blocks, like a database sequence's cache: a block of
 * {@value #TOKEN_BLOCK} is reserved and committed before any of it is used, then handed out from
 * memory. Tokens of a block left unused by a crash are skipped, never reused. This saves a write
 * per claim, which measurably mattered for the embedded store's throughput.
 */
final class SqliteDialect extends Dialect {

  static final String NOW_FUNCTION = "once_now";
  static final int TOKEN_BLOCK = 1_000;

  private final String reserveTokens;
  private final String upsert;
  private final String existing;
  private final String purge;
  private final java.time.Clock clock;

  /**
   * The next token to hand out and the end of the reserved block; guarded by the store's connection
   * lock.
   */
  private long nextToken;

  private long blockEnd;

  SqliteDialect(TableName table, java.time.Clock clock) {
    super(table);
    this.clock = clock;
    String t = table.qualified();
    String now = NOW_FUNCTION + "()";
    String expired = "expires_at <= excluded.created_at";
    reserveTokens =
        "UPDATE " + t + "_seq SET value = value + " + TOKEN_BLOCK + " WHERE id = 1 RETURNING value";
    upsert =
        "INSERT INTO "
            + t
            + " (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at, created_at)"
            + " VALUES (?1, ?2, '"
            + RecordState.IN_PROGRESS
            + "', ?3, ?4, 1, ?5 + ?6, ?5 + ?7, ?5)"
            + " ON CONFLICT (scope, idem_key) DO UPDATE SET"
            + " state = excluded.state,"
            + " fingerprint = excluded.fingerprint,"
            + " token = excluded.token,"
            + " attempt = CASE WHEN "
            + expired
            + " THEN 1 ELSE attempt + 1 END,"
            + " lease_until = excluded.lease_until,"
            + " expires_at = max(expires_at, excluded.expires_at),"
            + " recovery_point = CASE WHEN "
            + expired
            + " THEN NULL ELSE recovery_point END,"
            + " result = NULL,"
            + " created_at = CASE WHEN "
            + expired
            + " THEN excluded.created_at ELSE created_at END"
            + " WHERE "
            + expired
            + " OR (state = '"
            + RecordState.IN_PROGRESS
            + "' AND lease_until <= excluded.created_at"
            + " AND fingerprint = excluded.fingerprint)"
            + " RETURNING "
            + RECORD_COLUMNS
            + ", ?5 AS observed_at";
    existing =
        "SELECT "
            + RECORD_COLUMNS
            + ", ? AS observed_at FROM "
            + t
            + " WHERE scope = ? AND idem_key = ?";
    purge =
        "DELETE FROM "
            + t
            + " WHERE rowid IN (SELECT rowid FROM "
            + t
            + " WHERE expires_at <= "
            + now
            + " ORDER BY expires_at LIMIT ?)";
  }

  static long micros(Instant t) {
    return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1_000);
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
    return instant(rs.getLong(column));
  }

  /** The instant of {@code micros} since the epoch, the store's unit of time. */
  static Instant instant(long micros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  @Override
  String purgeSql() {
    return purge;
  }

  /**
   * Forgets the reserved block after its reservation was rolled back with a failed group commit, so
   * that the next claim reserves again from the committed counter. Tokens of the forgotten block
   * went only to claims of that batch, which failed with it.
   */
  void forgetReservedTokens() {
    blockEnd = nextToken;
  }

  @Override
  ClaimRow claim(Session session, ClaimRequest request) throws SQLException {
    if (nextToken == blockEnd) {
      // Used only once committed (or, in a group commit, only by claims that commit with it): a
      // rolled-back reservation would be handed out again later.
      long end =
          session.atomically(
              s -> {
                try (PreparedStatement ps = s.prepare(reserveTokens);
                    ResultSet rs = ps.executeQuery()) {
                  rs.next();
                  return rs.getLong(1);
                }
              });
      blockEnd = end;
      nextToken = end - TOKEN_BLOCK;
    }
    long token = ++nextToken;
    long now = micros(clock.instant());
    return session.atomically(
        s -> {
          try (PreparedStatement ps = s.prepare(upsert)) {
            Rows.bindId(ps, 1, request.id());
            ps.setString(3, request.fingerprint().encoded());
            ps.setLong(4, token);
            ps.setLong(5, now);
            ps.setLong(6, JdbcOperations.micros(request.lease()));
            ps.setLong(7, JdbcOperations.micros(lifetime(request)));
            try (ResultSet rs = ps.executeQuery()) {
              if (rs.next()) {
                return new ClaimRow(
                    true, rs.getInt("attempt"), Rows.record(request.id(), rs, this));
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

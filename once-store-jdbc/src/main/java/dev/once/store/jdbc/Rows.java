package dev.once.store.jdbc;

import dev.once.Fingerprint;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Reads records from result sets that carry {@link Dialect#RECORD_COLUMNS} and {@code observed_at}.
 */
final class Rows {

  private Rows() {}

  static IdempotencyRecord record(RecordId id, ResultSet rs, Dialect dialect) throws SQLException {
    return new IdempotencyRecord(
        id,
        RecordState.valueOf(rs.getString("state")),
        Fingerprint.parse(rs.getString("fingerprint")),
        rs.getLong("token"),
        dialect.time(rs, "lease_until"),
        dialect.time(rs, "expires_at"),
        rs.getBytes("recovery_point"),
        rs.getBytes("result"),
        dialect.time(rs, "observed_at"),
        dialect.time(rs, "created_at"));
  }

  /** Binds the (scope, key) pair to parameters {@code index} and {@code index + 1}. */
  static int bindId(java.sql.PreparedStatement ps, int index, RecordId id) throws SQLException {
    ps.setString(index, id.scope().value());
    ps.setString(index + 1, id.key().value());
    return index + 2;
  }
}

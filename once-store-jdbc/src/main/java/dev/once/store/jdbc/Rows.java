package dev.once.store.jdbc;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.UnreadableRecordException;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Reads records from result sets that carry {@link Dialect#RECORD_COLUMNS} and {@code observed_at}.
 */
final class Rows {

  private Rows() {}

  /**
   * The record in the current row. A row this version cannot parse (a fingerprint in a form a later
   * version wrote, say) is {@link UnreadableRecordException}, never a parse error: the engine
   * answers it, and a batch that meets it rolls back.
   */
  static IdempotencyRecord record(RecordId id, ResultSet rs, Dialect dialect) throws SQLException {
    RecordState state;
    Fingerprint fingerprint;
    try {
      state = RecordState.valueOf(rs.getString("state"));
      fingerprint = Fingerprint.parse(rs.getString("fingerprint"));
    } catch (RuntimeException e) {
      throw UnreadableRecordException.recordFormat(id, e);
    }
    return new IdempotencyRecord(
        id,
        state,
        fingerprint,
        rs.getLong("token"),
        dialect.time(rs, "lease_until"),
        dialect.time(rs, "expires_at"),
        rs.getBytes("recovery_point"),
        rs.getBytes("result"),
        dialect.time(rs, "observed_at"),
        dialect.time(rs, "created_at"));
  }

  /** The record named by the current row's {@code scope} and {@code idem_key} columns. */
  static RecordId id(ResultSet rs) throws SQLException {
    return RecordId.of(
        new Scope(rs.getString("scope")), IdempotencyKey.of(rs.getString("idem_key")));
  }

  /** Binds the (scope, key) pair to parameters {@code index} and {@code index + 1}. */
  static int bindId(java.sql.PreparedStatement ps, int index, RecordId id) throws SQLException {
    ps.setString(index, id.scope().value());
    ps.setString(index + 1, id.key().value());
    return index + 2;
  }
}

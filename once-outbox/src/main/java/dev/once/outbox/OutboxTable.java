package dev.once.outbox;

import dev.once.store.jdbc.support.TableName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.sql.DataSource;

/**
 * Every statement on one outbox table. A row is written by {@link #insert}, then changes only under
 * a claim: {@link #claim} hides due rows from other relays for a lease and counts the attempt; the
 * outcome is recorded fenced by that attempt number, so a relay whose lease ended and whose row
 * another relay claimed again can no longer change it.
 */
final class OutboxTable {

  private static final String COLUMNS =
      "id, message_id, destination, message_key, headers, payload, attempts";

  final Database db;
  final TableName table;
  final String outboxName;
  private final int timeoutSeconds;
  private final String insert;
  private final String selectDue;
  private final String takeLease;
  private final String markDelivered;
  private final String markRetry;
  private final String markDead;
  private final String purge;

  OutboxTable(Database db, TableName table, String outboxName, int timeoutSeconds) {
    this.db = db;
    this.table = table;
    this.outboxName = outboxName;
    this.timeoutSeconds = timeoutSeconds;
    String t = table.qualified();
    String now = db.now;
    this.insert =
        "INSERT INTO "
            + t
            + " (message_id, destination, message_key, headers, payload, state, attempts,"
            + " available_at, created_at) VALUES (?, ?, ?, ?, ?, 'PENDING', 0, "
            + now
            + ", "
            + now
            + ")"
            + db.insertSuffix();
    this.selectDue =
        "SELECT "
            + COLUMNS
            + " FROM "
            + t
            + " WHERE state = 'PENDING' AND available_at <= "
            + now
            + " ORDER BY available_at LIMIT ? FOR UPDATE SKIP LOCKED";
    this.takeLease =
        "UPDATE "
            + t
            + " SET attempts = attempts + 1, available_at = "
            + db.plusMicros(now)
            + " WHERE id = ?";
    // Delivered is true whoever holds the claim now, so it is not fenced: a relay that delivered
    // after its lease ended still spares the row a needless resend.
    this.markDelivered =
        "UPDATE "
            + t
            + " SET state = 'DELIVERED', delivered_at = "
            + now
            + ", last_error = NULL"
            + " WHERE id = ? AND state = 'PENDING'";
    this.markRetry =
        "UPDATE "
            + t
            + " SET available_at = "
            + db.plusMicros(now)
            + ", last_error = ?"
            + " WHERE id = ? AND attempts = ? AND state = 'PENDING'";
    this.markDead =
        "UPDATE "
            + t
            + " SET state = 'DEAD', last_error = ? WHERE id = ? AND attempts = ? AND state = 'PENDING'";
    String expired = "state = 'DELIVERED' AND delivered_at < " + db.plusMicros(now);
    this.purge =
        db == Database.POSTGRESQL
            ? "DELETE FROM "
                + t
                + " WHERE id IN (SELECT id FROM "
                + t
                + " WHERE "
                + expired
                + " ORDER BY delivered_at LIMIT ?)"
            : "DELETE FROM " + t + " WHERE " + expired + " ORDER BY delivered_at LIMIT ?";
  }

  /** Inserts {@code messages} in the caller's transaction; returns how many were new. */
  int insert(Connection c, Collection<OutboxMessage> messages) throws SQLException {
    int added = 0;
    try (PreparedStatement ps = prepare(c, insert)) {
      for (OutboxMessage m : messages) {
        ps.setString(1, m.id());
        ps.setString(2, m.destination());
        ps.setString(3, m.key());
        ps.setString(4, HeaderLines.encode(m.headers()));
        ps.setBytes(5, m.payloadUnsafe());
        try {
          added += ps.executeUpdate();
        } catch (SQLException e) {
          if (!db.isDuplicate(e)) {
            throw e;
          }
        }
      }
    }
    return added;
  }

  /** The due rows {@link #claim} took, and those it found with every attempt used (now DEAD). */
  record Claim(List<ClaimedRow> due, List<ClaimedRow> exhausted) {}

  /**
   * Claims up to {@code limit} due rows for {@code leaseMicros}, in one short transaction of its
   * own: rows locked by another claim in progress are skipped, not waited for.
   */
  Claim claim(DataSource ds, int limit, long leaseMicros, int maxAttempts) throws SQLException {
    try (Connection c = ds.getConnection()) {
      return inTransaction(
          c,
          () -> {
            List<ClaimedRow> due = new ArrayList<>();
            List<ClaimedRow> exhausted = new ArrayList<>();
            try (PreparedStatement ps = prepare(c, selectDue)) {
              ps.setInt(1, limit);
              try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                  int attempts = rs.getInt("attempts");
                  OutboxMessage m =
                      new OutboxMessage(
                          rs.getString("message_id"),
                          rs.getString("destination"),
                          rs.getString("message_key"),
                          HeaderLines.decode(rs.getString("headers")),
                          rs.getBytes("payload"));
                  boolean spent = attempts >= maxAttempts;
                  ClaimedRow row =
                      new ClaimedRow(
                          rs.getLong("id"),
                          new PendingMessage(
                              m,
                              Keys.idempotencyKey(outboxName, m.id()),
                              spent ? Math.max(attempts, 1) : attempts + 1));
                  (spent ? exhausted : due).add(row);
                }
              }
            }
            try (PreparedStatement ps = prepare(c, takeLease)) {
              for (ClaimedRow row : due) {
                ps.setLong(1, leaseMicros);
                ps.setLong(2, row.rowId());
                ps.addBatch();
              }
              if (!due.isEmpty()) {
                ps.executeBatch();
              }
            }
            // A row whose last lease ended without an outcome (its relay died) has no attempt left.
            try (PreparedStatement ps = prepare(c, markDead)) {
              for (ClaimedRow row : exhausted) {
                ps.setString(1, "the lease of the last attempt ended without an outcome");
                ps.setLong(2, row.rowId());
                ps.setInt(3, row.attempt());
                ps.addBatch();
              }
              if (!exhausted.isEmpty()) {
                ps.executeBatch();
              }
            }
            return new Claim(due, exhausted);
          });
    }
  }

  /** One outcome to record: {@code delayMicros} applies to a retry only. */
  record Result(ClaimedRow row, DeliveryOutcome outcome, long delayMicros) {}

  /** Records {@code results} in one transaction; returns the rows whose claim was lost. */
  List<ClaimedRow> record(DataSource ds, List<Result> results) throws SQLException {
    try (Connection c = ds.getConnection()) {
      return inTransaction(
          c,
          () -> {
            List<ClaimedRow> lost = new ArrayList<>();
            try (PreparedStatement delivered = prepare(c, markDelivered);
                PreparedStatement retry = prepare(c, markRetry);
                PreparedStatement dead = prepare(c, markDead)) {
              for (Result r : results) {
                SqlWrite write =
                    r.outcome()
                        .accept(
                            new DeliveryOutcome.Visitor<SqlWrite>() {
                              @Override
                              public SqlWrite delivered(DeliveryOutcome.Delivered outcome) {
                                return () -> {
                                  delivered.setLong(1, r.row().rowId());
                                  return delivered.executeUpdate();
                                };
                              }

                              @Override
                              public SqlWrite retry(DeliveryOutcome.Retry outcome) {
                                return () -> {
                                  retry.setLong(1, r.delayMicros());
                                  retry.setString(2, truncate(outcome.reason()));
                                  retry.setLong(3, r.row().rowId());
                                  retry.setInt(4, r.row().attempt());
                                  return retry.executeUpdate();
                                };
                              }

                              @Override
                              public SqlWrite dead(DeliveryOutcome.Dead outcome) {
                                return () -> {
                                  dead.setString(1, truncate(outcome.reason()));
                                  dead.setLong(2, r.row().rowId());
                                  dead.setInt(3, r.row().attempt());
                                  return dead.executeUpdate();
                                };
                              }
                            });
                int updated = write.run();
                if (updated == 0) {
                  lost.add(r.row());
                }
              }
            }
            return lost;
          });
    }
  }

  /** Deletes up to {@code batchSize} rows delivered more than {@code retentionMicros} ago. */
  int purge(DataSource ds, long retentionMicros, int batchSize) throws SQLException {
    try (Connection c = ds.getConnection()) {
      return inTransaction(
          c,
          () -> {
            try (PreparedStatement ps = prepare(c, purge)) {
              ps.setLong(1, -retentionMicros);
              ps.setInt(2, batchSize);
              return ps.executeUpdate();
            }
          });
    }
  }

  /**
   * Applies the schema file, serialised against concurrent creation where the database needs it.
   */
  @SuppressWarnings(
      "NullAway") // safe: the work's result is a Void, whose only value is null, and nobody reads
  // it
  void createSchema(DataSource ds) throws SQLException {
    try (Connection c = ds.getConnection()) {
      inTransaction(
          c,
          () -> {
            dev.once.store.jdbc.support.Migrations.apply(
                c, db.migration(), Outbox.DEFAULT_TABLE, table, db.schemaLock, timeoutSeconds);
            return null;
          });
    }
  }

  private PreparedStatement prepare(Connection c, String sql) throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    ps.setQueryTimeout(timeoutSeconds);
    return ps;
  }

  private static String truncate(String reason) {
    return reason.length() <= 1000 ? reason : reason.substring(0, 1000);
  }

  @FunctionalInterface
  private interface SqlWork<T> {
    T run() throws SQLException;
  }

  /**
   * Runs {@code work} in a transaction of its own on a pooled connection, restoring auto-commit.
   */
  private static <T> T inTransaction(Connection c, SqlWork<T> work) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    if (autoCommit) {
      c.setAutoCommit(false);
    }
    try {
      T result = work.run();
      c.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    } finally {
      if (autoCommit) {
        c.setAutoCommit(true);
      }
    }
  }

  /** One row's update, chosen by its outcome and run in the recording transaction. */
  @FunctionalInterface
  private interface SqlWrite {
    int run() throws SQLException;
  }
}

package dev.once.outbox;

import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/** What differs between the databases an outbox runs on: the clock, time arithmetic, duplicates. */
enum Database {
  POSTGRESQL(
      "postgresql",
      "clock_timestamp()",
      "SELECT pg_advisory_xact_lock(hashtext('dev.once schema'))") {
    @Override
    String plusMicros(String time) {
      return "(" + time + " + ? * interval '1 microsecond')";
    }

    @Override
    String insertSuffix() {
      // A failed statement aborts a PostgreSQL transaction, the caller's: a duplicate must not
      // fail.
      return " ON CONFLICT (message_id) DO NOTHING";
    }
  },

  MARIADB("mariadb", "UTC_TIMESTAMP(6)", null) {
    @Override
    String plusMicros(String time) {
      return "(" + time + " + INTERVAL ? MICROSECOND)";
    }

    @Override
    String insertSuffix() {
      // MariaDB rolls back only the failed statement, so a duplicate may fail and be caught;
      // INSERT IGNORE would also turn truncation into warnings.
      return "";
    }
  };

  final String folder;
  final String now;
  final @Nullable String schemaLock;

  Database(String folder, String now, @Nullable String schemaLock) {
    this.folder = folder;
    this.now = now;
    this.schemaLock = schemaLock;
  }

  /** An SQL expression for {@code time} plus a bind parameter in microseconds. */
  abstract String plusMicros(String time);

  /** What follows the INSERT's VALUES so that a duplicate message id adds no row. */
  abstract String insertSuffix();

  /** Whether {@code e} says the message id is already in the outbox. */
  boolean isDuplicate(SQLException e) {
    return e.getSQLState() != null && e.getSQLState().startsWith("23") && e.getErrorCode() == 1062;
  }

  String migration() {
    return "db/once/" + folder + "/V1__once_outbox.sql";
  }
}

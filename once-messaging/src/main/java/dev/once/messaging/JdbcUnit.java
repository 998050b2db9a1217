package dev.once.messaging;

import dev.once.Recording;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One message's database transaction: a savepoint after the claim, so a failed handler's writes can
 * be undone while the claim stays to record the failure; commit only if the outcome was recorded.
 */
final class JdbcUnit implements MessageSemantics.Unit {

  private static final Logger log = LoggerFactory.getLogger(JdbcUnit.class);

  private final Connection connection;
  private @Nullable Savepoint savepoint;
  private boolean ended;

  JdbcUnit(Connection connection) {
    this.connection = connection;
  }

  @Override
  public void begin() throws SQLException {
    savepoint = connection.setSavepoint();
  }

  @Override
  public void undoHandler() throws SQLException {
    connection.rollback(savepoint);
  }

  @Override
  public boolean keep(Recording recording) {
    if (recording != Recording.RECORDED && recording != Recording.RESULT_NOT_STORED) {
      discard();
      return false;
    }
    ended = true;
    try {
      connection.commit();
      return true;
    } catch (SQLException e) {
      // Perhaps committed, perhaps not: the redelivery finds out (it replays if the commit held).
      log.warn("commit failed; the message will be redelivered: {}", e.toString());
      rollbackQuietly();
      return false;
    }
  }

  @Override
  public void discard() {
    if (!ended) {
      ended = true;
      rollbackQuietly();
    }
  }

  private void rollbackQuietly() {
    try {
      connection.rollback();
    } catch (SQLException e) {
      log.debug("rollback failed: {}", e.toString());
    }
  }
}

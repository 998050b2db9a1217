package dev.once.store.jdbc;

import dev.once.internal.Arguments;
import dev.once.store.IdempotencyStore;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Transactional mode: the claim, the caller's business writes and the completion commit or roll
 * back together, in the caller's own transaction, so a crash at any point leaves either all of them
 * or none.
 *
 * <pre>{@code
 * TransactionalStore tx = postgresStore.transactional();
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   IdempotencyStore store = tx.on(c);
 *   switch (store.claim(request)) {
 *     case ClaimResult.Claimed claimed -> {
 *       insertPayment(c, payment);                                 // business writes, same transaction
 *       store.complete(id, claimed.token(), response, ttl);
 *     }
 *     case ClaimResult.Existing existing -> replay(existing.record());
 *   }
 *   c.commit();                                                    // claim, writes and completion at once
 * }
 * }</pre>
 *
 * <p>A concurrent duplicate's claim waits on the record's unique index until the first transaction
 * ends: after a commit it sees the completed record, after a rollback it claims afresh. Nothing a
 * transactional view does is visible to others before the caller commits, so the view's record is
 * never in progress for anyone else; a lease only matters if the transaction hangs.
 */
public final class TransactionalStore {

  private final Dialect dialect;
  private final Statements statements;
  private final int timeoutSeconds;
  private final ChangeFeed feed;

  TransactionalStore(Dialect dialect, Statements statements, int timeoutSeconds, ChangeFeed feed) {
    this.dialect = dialect;
    this.statements = statements;
    this.timeoutSeconds = timeoutSeconds;
    this.feed = feed;
  }

  /**
   * A store view that runs every statement on {@code connection}, inside the caller's transaction.
   * It never commits, rolls back or closes the connection; closing the view does nothing. A failed
   * statement throws {@link dev.once.store.StoreUnavailableException} and, on PostgreSQL, leaves
   * the transaction aborted: the caller rolls back.
   *
   * @throws IllegalArgumentException if {@code connection} is null or in auto-commit mode, where
   *     there is no transaction to join
   */
  public IdempotencyStore on(Connection connection) {
    Arguments.present("connection", connection);
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalArgumentException(
            "connection is in auto-commit mode; transactional mode joins the caller's transaction: call setAutoCommit(false) first");
      }
    } catch (SQLException e) {
      throw Failures.unavailable("transactional view", dialect.table, e);
    }
    return new JdbcOperations(
        dialect, statements, Connections.borrowed(connection), timeoutSeconds, feed);
  }
}

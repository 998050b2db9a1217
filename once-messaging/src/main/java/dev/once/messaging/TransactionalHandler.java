package dev.once.messaging;

import dev.once.ExecutionContext;
import java.sql.Connection;

/**
 * The effect of one message in transactional mode: every write it makes on {@code connection}
 * (business rows, outbox rows) commits in one transaction with the idempotency record, or not at
 * all. It must not commit, roll back or close the connection. Outcomes are classified as for {@link
 * MessageHandler}; a final failure's own writes are rolled back (to a savepoint) while the failure
 * itself is recorded.
 *
 * @param <M> the broker's message type
 */
@FunctionalInterface
public interface TransactionalHandler<M> {

  void handle(M message, Connection connection, ExecutionContext context) throws Exception;
}

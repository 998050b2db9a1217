package dev.once.spring;

import dev.once.store.IdempotencyStore;
import java.sql.Connection;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The transaction a guarded request runs in on this thread, if any: while it is open, the {@link
 * JoiningStore} runs every store call on its connection, so the claim and the record commit with
 * the handler's own writes. Only the {@link SpringTransactionBoundary} opens one, so an
 * application's other transactions never pull store calls in.
 */
final class TransactionJoin {

  private final ThreadLocal<IdempotencyStore> current = new ThreadLocal<>();
  private final Function<Connection, IdempotencyStore> views;
  private final DataSource dataSource;

  /**
   * @param views a store view on a connection's transaction, e.g. {@code TransactionalStore::on}
   * @param dataSource the DataSource whose transactions the views join
   */
  TransactionJoin(Function<Connection, IdempotencyStore> views, DataSource dataSource) {
    this.views = views;
    this.dataSource = dataSource;
  }

  DataSource dataSource() {
    return dataSource;
  }

  /** The store view on this thread's transaction, or null outside one. */
  IdempotencyStore current() {
    return current.get();
  }

  void enter(Connection connection) {
    current.set(views.apply(connection));
  }

  void leave() {
    current.remove();
  }
}

package dev.once.messaging;

import dev.once.ExecutionPolicy;
import dev.once.Once;
import dev.once.OnceListener;
import dev.once.store.IdempotencyStore;
import dev.once.store.StoreUnavailableException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Idempotent message consumption in one database transaction: the claim, the handler's business
 * writes, any outbox rows it inserts, and the record of the outcome commit together, and {@link
 * #process} answers {@link Acknowledgement.Ack} only after the commit. A consumer killed at any
 * point leaves all of them or none: the redelivery either replays or runs afresh, never twice.
 *
 * <pre>{@code
 * PostgresStore store = PostgresStore.builder(dataSource).build();
 * TransactionalMessageIdempotency<Delivery> orders =
 *     TransactionalMessageIdempotency.builder(dataSource, store.transactional()::on, AmqpMessages.READER)
 *         .scope(Scope.of("billing", "orders"))
 *         .build();
 * Acknowledgement a = orders.process(delivery, (message, connection, context) -> {
 *   insertInvoice(connection, message);              // same transaction as the record
 *   outbox.enqueue(connection, invoiceCreated(message)); // and as the outbox row
 * });
 * }</pre>
 *
 * <p>A duplicate delivered while the first is being processed waits on the record's unique index
 * until the first transaction ends, then replays (or runs, after a rollback): keep handlers short.
 * A final failure's own writes are rolled back to a savepoint while the failure is recorded.
 *
 * <p>Thread-safe: share one per subscription; {@link #close()} it with the consumer.
 *
 * @param <M> the broker's message type
 */
public final class TransactionalMessageIdempotency<M> implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(TransactionalMessageIdempotency.class);

  private final DataSource dataSource;
  private final Function<Connection, IdempotencyStore> views;
  private final JoinedStore joined = new JoinedStore();
  private final Once once;
  private final MessageSemantics<M> semantics;

  private TransactionalMessageIdempotency(Builder<M> b, MessageSemantics<M> semantics) {
    this.dataSource = b.dataSource;
    this.views = b.views;
    this.once = Once.builder(joined).listener(b.listener).defaults(semantics.policy()).build();
    this.semantics = semantics;
  }

  /**
   * A builder over the database's pool and its store's transactional views, typically {@code
   * postgresStore.transactional()::on} (or MariaDB's).
   */
  public static <M> Builder<M> builder(
      DataSource dataSource,
      Function<Connection, IdempotencyStore> views,
      MessageReader<M> reader) {
    return new Builder<>(dataSource, views, reader);
  }

  /**
   * Processes one delivery in a transaction of its own: runs {@code handler} if this is the first
   * delivery of its key, commits, and says how to acknowledge it. Never throws for anything the
   * message, the handler or the database did.
   */
  public Acknowledgement process(M message, TransactionalHandler<M> handler) {
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(handler, "handler");
    MessageSemantics.Identification identification = semantics.identify(message);
    if (identification instanceof MessageSemantics.Refused r) {
      return r.reject();
    }
    MessageSemantics.Target target = (MessageSemantics.Target) identification;
    try (Connection connection = dataSource.getConnection()) {
      boolean autoCommit = connection.getAutoCommit();
      connection.setAutoCommit(false);
      JdbcUnit unit = new JdbcUnit(connection);
      joined.bind(views.apply(connection));
      try {
        return semantics.run(
            once, target, unit, context -> handler.handle(message, connection, context));
      } finally {
        joined.unbind();
        unit.discard(); // a no-op unless something escaped before the unit ended
        connection.setAutoCommit(autoCommit);
      }
    } catch (SQLException | StoreUnavailableException e) {
      log.warn(
          "the database failed around message {}; redelivering: {}", target.key(), e.toString());
      return new Acknowledgement.Redeliver(
          semantics.policy().storeRetryAfter(),
          Acknowledgement.RedeliverReason.STORE_UNAVAILABLE,
          e);
    }
  }

  /** This consumer bound to a handler, for a broker consumer to call per delivery. */
  public MessageProcessor<M> processor(TransactionalHandler<M> handler) {
    Objects.requireNonNull(handler, "handler");
    return semantics.processor(message -> process(message, handler), null);
  }

  /** The execution policy messages run under. */
  public ExecutionPolicy policy() {
    return semantics.policy();
  }

  /** Stops the internal engine; never closes the {@code DataSource}. */
  @Override
  public void close() {
    once.close();
  }

  /**
   * Builds a {@link TransactionalMessageIdempotency}. The policy defaults to {@link
   * ExecutionPolicy#DEFAULTS} without heartbeat (nobody else sees the record before commit).
   */
  public static final class Builder<M> extends MessageOptions<M, Builder<M>> {
    private final DataSource dataSource;
    private final Function<Connection, IdempotencyStore> views;
    private OnceListener listener = OnceListener.NONE;

    private Builder(
        DataSource dataSource,
        Function<Connection, IdempotencyStore> views,
        MessageReader<M> reader) {
      super(reader);
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
      this.views = Objects.requireNonNull(views, "views");
    }

    /** Receives the engine's events and store timings (default none). */
    public Builder<M> listener(OnceListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * @throws IllegalStateException if no scope was given, or the policy heartbeats or fails open
     */
    public TransactionalMessageIdempotency<M> build() {
      ExecutionPolicy p =
          policy != null ? policy : ExecutionPolicy.DEFAULTS.toBuilder().heartbeat(false).build();
      MessageSemantics.transactionalConflict(p)
          .ifPresent(
              conflict -> {
                throw new IllegalStateException(conflict);
              });
      return new TransactionalMessageIdempotency<>(this, semantics(p));
    }
  }
}

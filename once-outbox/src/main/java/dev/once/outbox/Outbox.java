package dev.once.outbox;

import dev.once.IdempotencyKey;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.internal.Arguments;
import dev.once.protocol.WireProtocol;
import dev.once.store.StoreUnavailableException;
import dev.once.store.jdbc.support.TableName;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A transactional outbox: messages written in the same database transaction as the business change
 * they announce, so that both happen or neither does, and sent afterwards by an {@link OutboxRelay}
 * with an {@code Idempotency-Key} derived from the message id.
 *
 * <pre>{@code
 * Outbox outbox = Outbox.postgres(dataSource).build();
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   insertOrder(c, order);                                         // the business write
 *   outbox.enqueue(c, OutboxMessage.of("order-" + order.id(), "https://mail.internal/confirm", json));
 *   c.commit();                                                    // both, or neither
 * }
 * OutboxRelay relay = outbox.relay(HttpDelivery.create()).build();
 * relay.start();
 * }</pre>
 *
 * <p>The schema is {@code db/once/postgresql/V1__once_outbox.sql} (or {@code mariadb}) on the
 * classpath; apply it with a migration tool, or let {@link Builder#autoCreateSchema(boolean)} apply
 * it. An outbox is immutable and thread-safe.
 */
public final class Outbox {

  /** The header that carries the derived key downstream, on HTTP requests and Kafka records. */
  public static final String IDEMPOTENCY_KEY_HEADER = WireProtocol.KEY_HEADER;

  static final String DEFAULT_TABLE = "once_outbox";

  final DataSource dataSource;
  final OutboxTable table;

  private Outbox(Builder b) {
    this.dataSource = b.dataSource;
    this.table =
        new OutboxTable(
            b.database,
            b.table,
            b.name == null ? b.table.qualified() : b.name,
            (int) b.queryTimeout.toSeconds());
  }

  /** An outbox in PostgreSQL (11 or later), over the application's pool, which it never closes. */
  public static Builder postgres(DataSource dataSource) {
    return new Builder(dataSource, Database.POSTGRESQL);
  }

  /** An outbox in MariaDB (10.6 or later), over the application's pool, which it never closes. */
  public static Builder mariaDb(DataSource dataSource) {
    return new Builder(dataSource, Database.MARIADB);
  }

  /**
   * Adds {@code message} in the caller's transaction on {@code connection}: it becomes visible to
   * relays when the caller commits, and never exists if the caller rolls back. Never commits, rolls
   * back or closes the connection.
   *
   * @return {@code true} if added; {@code false} if a message with the same id is already in the
   *     outbox (not yet purged), in which case nothing changes
   * @throws IllegalArgumentException if the connection is null or in auto-commit mode
   * @throws StoreUnavailableException if the insert fails; on PostgreSQL the caller's transaction
   *     is then aborted, and the caller rolls back
   */
  public boolean enqueue(Connection connection, OutboxMessage message) {
    return enqueueAll(connection, List.of(message)) == 1;
  }

  /**
   * As {@link #enqueue}, for several messages; returns how many were added (duplicates are not).
   */
  public int enqueueAll(Connection connection, Collection<OutboxMessage> messages) {
    Arguments.present("connection", connection);
    if (messages == null || messages.stream().anyMatch(java.util.Objects::isNull)) {
      throw new IllegalArgumentException("messages must not be null or contain null");
    }
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalArgumentException(
            "connection is in auto-commit mode; the outbox joins the caller's "
                + "transaction: call setAutoCommit(false) first");
      }
      return table.insert(connection, messages);
    } catch (SQLException e) {
      throw unavailable("enqueue", e);
    }
  }

  /**
   * The {@code Idempotency-Key} the relay sends with the message of id {@code messageId}: a
   * name-based UUID of this outbox's name and the id, the same on every attempt.
   */
  public String idempotencyKey(String messageId) {
    try {
      return Keys.idempotencyKey(table.outboxName, IdempotencyKey.of(messageId).value());
    } catch (InvalidIdempotencyKeyException e) {
      throw new IllegalArgumentException(
          "messageId must be 1-255 printable ASCII characters: " + e.getMessage(), e);
    }
  }

  /** A relay for this outbox that sends through {@code delivery}. */
  public OutboxRelay.Builder relay(Delivery delivery) {
    return new OutboxRelay.Builder(this, delivery);
  }

  /**
   * Deletes up to {@code batchSize} messages delivered more than {@code retention} ago, in one
   * short transaction; pending and dead messages are never purged. Relays purge on their own
   * schedule.
   *
   * @return how many were deleted
   */
  public int purgeDelivered(Duration retention, int batchSize) {
    if (retention == null || retention.isNegative()) {
      throw new IllegalArgumentException("retention must be zero or positive; was " + retention);
    }
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1; was " + batchSize);
    }
    try {
      return table.purge(dataSource, micros(retention), batchSize);
    } catch (SQLException e) {
      throw unavailable("purge", e);
    }
  }

  /** The name that, with each message id, derives the downstream keys. */
  public String name() {
    return table.outboxName;
  }

  @Override
  public String toString() {
    return "Outbox[" + table.table + ", name=" + table.outboxName + "]";
  }

  StoreUnavailableException unavailable(String operation, SQLException e) {
    return new StoreUnavailableException(
        operation
            + " on outbox "
            + table.table
            + " failed: SQLState "
            + e.getSQLState()
            + ": "
            + e.getMessage(),
        e);
  }

  static long micros(Duration d) {
    return d.toNanos() / 1_000;
  }

  /** Options of an {@link Outbox}. */
  public static final class Builder {

    private final DataSource dataSource;
    private final Database database;
    private TableName table = new TableName(null, DEFAULT_TABLE);
    private @Nullable String name;
    private Duration queryTimeout = Duration.ofSeconds(5);
    private boolean autoCreateSchema;

    private Builder(DataSource dataSource, Database database) {
      this.dataSource = Arguments.present("dataSource", dataSource);
      this.database = database;
    }

    /**
     * The table, {@code name} or {@code schema.name}; default {@code once_outbox}. Each part must
     * match {@code [A-Za-z_][A-Za-z0-9_]{0,47}}: the name is spliced into SQL, so nothing else is
     * accepted.
     */
    public Builder tableName(String tableName) {
      this.table = TableName.parse(tableName);
      return this;
    }

    /**
     * The outbox's name, part of every derived {@code Idempotency-Key}; default the table name.
     * Give each service its own name when several write to one downstream scope. Changing it
     * changes the keys of messages still pending, which a downstream would then run again.
     */
    public Builder name(String name) {
      try {
        this.name = IdempotencyKey.of(name).value();
      } catch (InvalidIdempotencyKeyException e) {
        throw new IllegalArgumentException(
            "name must be 1-255 printable ASCII characters; was "
                + (name == null ? "null" : "'" + name + "'"),
            e);
      }
      return this;
    }

    /** The longest one statement may run; default 5 seconds; whole seconds, at least one. */
    public Builder queryTimeout(Duration queryTimeout) {
      if (queryTimeout == null
          || queryTimeout.getSeconds() < 1
          || queryTimeout.getNano() != 0
          || queryTimeout.getSeconds() > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            "queryTimeout must be a whole number of seconds, at least 1; was " + queryTimeout);
      }
      this.queryTimeout = queryTimeout;
      return this;
    }

    /**
     * Whether {@link #build()} creates the table and indexes if they are missing, from the same
     * file a migration tool would apply; default {@code false}.
     */
    public Builder autoCreateSchema(boolean autoCreateSchema) {
      this.autoCreateSchema = autoCreateSchema;
      return this;
    }

    /**
     * Builds the outbox; with {@link #autoCreateSchema(boolean)} it first creates the schema.
     *
     * @throws StoreUnavailableException if the schema is to be created and that fails
     */
    public Outbox build() {
      Outbox outbox = new Outbox(this);
      if (autoCreateSchema) {
        try {
          outbox.table.createSchema(dataSource);
        } catch (SQLException e) {
          throw outbox.unavailable("schema creation", e);
        }
      }
      return outbox;
    }
  }
}

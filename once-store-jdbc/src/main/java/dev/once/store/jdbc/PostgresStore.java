package dev.once.store.jdbc;

import dev.once.store.StoreUnavailableException;
import javax.sql.DataSource;

/**
 * An idempotency store in PostgreSQL (11 or later), shared by every node that uses the same table.
 *
 * <pre>{@code
 * PostgresStore store = PostgresStore.builder(dataSource)   // the application's pool
 *     .tableName("once_records")
 *     .build();
 * }</pre>
 *
 * <p>A claim is one statement and one round trip ({@code INSERT … ON CONFLICT DO UPDATE …
 * RETURNING}), fencing tokens come from the sequence {@code <table>_seq}, and every time is the
 * database's {@code clock_timestamp()}, so clock skew between application nodes cannot break a
 * lease. {@link #awaitChange} is served by LISTEN/NOTIFY on one connection taken from the pool
 * while anyone waits. For claims inside the caller's own transaction, see {@link #transactional()}.
 *
 * <p>The schema is {@code db/once/postgresql/V1__once_records.sql} and {@code
 * V2__once_records_in_flight.sql} (the index of {@link #inFlight}) on the classpath; apply them
 * with a migration tool, or let {@link Builder#autoCreateSchema(boolean)} apply them.
 */
public final class PostgresStore extends ServerStore {

  private PostgresStore(Builder b, Dialect dialect) {
    super(
        dialect,
        Connections.of(b.dataSource()),
        b.timeoutSeconds(),
        b.notifications
            ? new PostgresChangeFeed(b.dataSource(), dialect.table, b.timeoutSeconds())
            : ChangeFeed.NONE);
  }

  /** A builder over the application's {@code DataSource}; the store never closes it. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /** A store with every option at its default, on a schema that already exists. */
  public static PostgresStore of(DataSource dataSource) {
    return builder(dataSource).build();
  }

  /** The view of this store that runs inside the caller's transactions. */
  public TransactionalStore transactional() {
    return transactionalView();
  }

  /** Options of a {@link PostgresStore}. */
  public static final class Builder extends ServerStoreBuilder<Builder> {

    private boolean notifications = true;

    private Builder(DataSource dataSource) {
      super(dataSource);
    }

    /**
     * Whether {@link PostgresStore#awaitChange} uses LISTEN/NOTIFY; default {@code true}. It takes
     * one connection from the pool for as long as the store is open, from the first wait on, and
     * each wait marks its record so that the record's next transition notifies (one short UPDATE).
     * With {@code false}, waiters poll.
     */
    public Builder notifications(boolean notifications) {
      this.notifications = notifications;
      return this;
    }

    /**
     * Builds the store; with {@link #autoCreateSchema(boolean)} it first creates the schema.
     *
     * @throws StoreUnavailableException if the schema is to be created and the database cannot be
     *     reached
     */
    public PostgresStore build() {
      Dialect dialect = new PostgresDialect(table);
      createSchemaIfAsked(dialect);
      return new PostgresStore(this, dialect);
    }
  }
}

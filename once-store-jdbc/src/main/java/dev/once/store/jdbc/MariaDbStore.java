package dev.once.store.jdbc;

import dev.once.store.StoreUnavailableException;
import javax.sql.DataSource;

/**
 * An idempotency store in MariaDB (10.3 or later), shared by every node that uses the same table.
 *
 * <pre>{@code
 * MariaDbStore store = MariaDbStore.builder(dataSource).build();
 * }</pre>
 *
 * <p>A claim is an {@code INSERT … ON DUPLICATE KEY UPDATE} with conditional assignments and a
 * locking read of the row, in one transaction (two round trips). Fencing tokens come from the
 * sequence {@code <table>_seq}; times are the database's {@code UTC_TIMESTAMP(6)}. MariaDB has no
 * change notification, so {@link #notifiesChanges()} is false and waiters poll.
 *
 * <p>MySQL has neither sequences nor {@code PREVIOUS VALUE FOR}, so this store does not run on
 * MySQL as it stands; see {@code docs/jdbc-stores.md}.
 *
 * <p>The schema is {@code db/once/mariadb/V1__once_records.sql} and {@code
 * V2__once_records_in_flight.sql} (the index of {@link #inFlight}) on the classpath; apply them
 * with a migration tool, or let {@link Builder#autoCreateSchema(boolean)} apply them.
 */
public final class MariaDbStore extends ServerStore {

  private MariaDbStore(Builder b, Dialect dialect) {
    super(dialect, Connections.of(b.dataSource()), b.timeoutSeconds(), ChangeFeed.NONE);
  }

  /** A builder over the application's {@code DataSource}; the store never closes it. */
  public static Builder builder(DataSource dataSource) {
    return new Builder(dataSource);
  }

  /** A store with every option at its default, on a schema that already exists. */
  public static MariaDbStore of(DataSource dataSource) {
    return builder(dataSource).build();
  }

  /** The view of this store that runs inside the caller's transactions. */
  public TransactionalStore transactional() {
    return transactionalView();
  }

  /** Options of a {@link MariaDbStore}. */
  public static final class Builder extends ServerStoreBuilder<Builder> {

    private Builder(DataSource dataSource) {
      super(dataSource);
    }

    /**
     * Builds the store; with {@link #autoCreateSchema(boolean)} it first creates the schema.
     *
     * @throws StoreUnavailableException if the schema is to be created and the database cannot be
     *     reached
     */
    public MariaDbStore build() {
      Dialect dialect = new MariaDbDialect(table);
      createSchemaIfAsked(dialect);
      return new MariaDbStore(this, dialect);
    }
  }
}

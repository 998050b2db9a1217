package dev.once.servlet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import dev.once.tck.RequiredServices;
import io.lettuce.core.RedisClient;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The machine's PostgreSQL and Redis as stores for the filter's end-to-end tests. Each store is
 * this run's own (a fresh table, a fresh key prefix: other worktrees' builds share the servers) and
 * closing it releases everything it opened.
 */
final class RealStores {

  private static final String PG_URL = "jdbc:postgresql://127.0.0.1:5432/test";

  private RealStores() {}

  static IdempotencyStore postgres() {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
    String table = "once_servlet_test_" + Long.toString(System.nanoTime(), 36);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(PG_URL);
    config.setUsername("postgres");
    config.setMaximumPoolSize(16);
    HikariDataSource pool = new HikariDataSource(config);
    PostgresStore store =
        PostgresStore.builder(pool).tableName(table).autoCreateSchema(true).build();
    return new Owning(
        store,
        () -> {
          pool.close();
          try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "");
              Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("DROP SEQUENCE IF EXISTS " + table + "_seq");
          }
        });
  }

  static IdempotencyStore redis() {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
    RedisStore store =
        RedisStore.builder(client)
            .keyPrefix("once-servlet-test-" + Long.toString(System.nanoTime(), 36) + ":")
            .build();
    return new Owning(store, client::shutdown);
  }

  /** Closes what the store was opened on after the store itself. */
  private static final class Owning extends ForwardingStore {
    private final IdempotencyStore delegate;
    private final Cleanup cleanup;

    Owning(IdempotencyStore delegate, Cleanup cleanup) {
      this.delegate = delegate;
      this.cleanup = cleanup;
    }

    @Override
    protected IdempotencyStore delegate() {
      return delegate;
    }

    @Override
    public void close() {
      delegate.close();
      try {
        cleanup.run();
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  @FunctionalInterface
  private interface Cleanup {
    void run() throws SQLException;
  }
}

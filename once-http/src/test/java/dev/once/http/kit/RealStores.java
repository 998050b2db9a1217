package dev.once.http.kit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import dev.once.tck.OwnedStore;
import dev.once.tck.RequiredServices;
import io.lettuce.core.RedisClient;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

/**
 * The machine's PostgreSQL and Redis as stores for the adapters' end-to-end tests. Each store is
 * this run's own (a fresh table, a fresh key prefix: other worktrees' builds share the servers),
 * closing it releases everything it opened, and it batches as the store itself does ({@link
 * OwnedStore}), so the adapters' concurrent calls are gathered as in production.
 *
 * <p>An adapter module that uses it has the stores, the PostgreSQL driver and HikariCP on its test
 * class path (a test jar brings none of its own dependencies).
 */
public final class RealStores {

  private static final String PG_URL = "jdbc:postgresql://127.0.0.1:5432/test";

  private RealStores() {}

  /** A PostgreSQL store on a table of its own, dropped when the store is closed. */
  public static IdempotencyStore postgres(String tablePrefix) {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
    String table = tablePrefix + Long.toString(System.nanoTime(), 36);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(PG_URL);
    config.setUsername("postgres");
    config.setMaximumPoolSize(16);
    HikariDataSource pool = new HikariDataSource(config);
    PostgresStore store =
        PostgresStore.builder(pool).tableName(table).autoCreateSchema(true).build();
    return OwnedStore.of(
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

  /** A Redis store under a key prefix of its own; its client is shut down with it. */
  public static IdempotencyStore redis(String keyPrefix) {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
    RedisStore store =
        RedisStore.builder(client)
            .keyPrefix(keyPrefix + Long.toString(System.nanoTime(), 36) + ":")
            .build();
    return OwnedStore.of(store, client::shutdown);
  }
}

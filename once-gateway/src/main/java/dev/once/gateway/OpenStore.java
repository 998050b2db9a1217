package dev.once.gateway;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.internal.Causes;
import dev.once.store.IdempotencyStore;
import dev.once.store.StoreUnavailableException;
import dev.once.store.jdbc.EmbeddedStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store a {@link StoreUrl} names, opened, with whatever it runs on (a connection pool, a Redis
 * client) so that closing this closes both, store first.
 *
 * @param store the store
 * @param resources what the store runs on; closed after it
 */
record OpenStore(IdempotencyStore store, AutoCloseable resources) implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(OpenStore.class);

  /** How long getting a PostgreSQL connection may take before a request is answered 503. */
  static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(2);

  /**
   * Opens the configured store and logs which one it is, where, and its namespace.
   *
   * @throws StoreUnavailableException if it cannot be reached, its message one line naming the
   *     store and its address (never a password) and why
   */
  static OpenStore open(GatewayConfig config) {
    StoreUrl url = config.store();
    OpenStore open;
    try {
      open = opened(config);
    } catch (StoreUnavailableException e) {
      throw new StoreUnavailableException(
          "the "
              + url.kind()
              + " store at "
              + url.address()
              + " is unreachable ("
              + Causes.unreachable(e)
              + "); start it or set --store ("
              + StoreUrl.FORMS
              + ")",
          e);
    }
    log.info(
        "Once store: {} at {}, {}",
        url.kind(),
        url instanceof StoreUrl.Embedded ? config.dataDir().toAbsolutePath() : url.address(),
        url instanceof StoreUrl.Redis || url instanceof StoreUrl.RedisCluster
            ? "key prefix " + redisPrefix(config)
            : "table " + config.storeTable());
    return open;
  }

  private static OpenStore opened(GatewayConfig config) {
    StoreUrl url = config.store();
    if (url instanceof StoreUrl.Postgres pg) {
      return postgres(pg, config.storePoolSize(), config.storeTable());
    } else if (url instanceof StoreUrl.Redis r) {
      RedisClient client = RedisClient.create(RedisURI.create(r.uri()));
      return withClient(
          () -> RedisStore.builder(client).keyPrefix(redisPrefix(config)).build(),
          client::shutdown);
    } else if (url instanceof StoreUrl.RedisCluster c) {
      List<RedisURI> seeds = c.seeds().stream().map(s -> RedisURI.create("redis://" + s)).toList();
      RedisClusterClient client = RedisClusterClient.create(seeds);
      return withClient(
          () -> RedisStore.builder(client).keyPrefix(redisPrefix(config)).build(),
          client::shutdown);
    }
    EmbeddedStore store =
        EmbeddedStore.builder(config.dataDir())
            .tableName(config.storeTable())
            .durability(config.durability())
            // What follows a store's answer never blocks (it runs on Lettuce's thread on Redis): it
            // builds the upstream request and hands it to the exchange's loop, or writes the
            // answer. So the writer may run it: one thread fewer woken for each store call.
            .answersOnWriter(true)
            .build();
    return new OpenStore(store, () -> {});
  }

  /**
   * The store table is the gateway's namespace on every store: on Redis, the prefix of every key,
   * so two gateways in front of different upstreams on one Redis never replay each other's
   * responses. The default table keeps Redis's default prefix, where earlier gateways wrote their
   * records.
   */
  static String redisPrefix(GatewayConfig config) {
    return config.storeTable().equals(GatewayConfig.DEFAULT_STORE_TABLE)
        ? RedisStore.DEFAULT_KEY_PREFIX
        : config.storeTable() + ":";
  }

  private static OpenStore postgres(StoreUrl.Postgres pg, int poolSize, String table) {
    HikariConfig hikari = new HikariConfig();
    hikari.setJdbcUrl(pg.jdbcUrl());
    hikari.setUsername(pg.user());
    hikari.setPassword(pg.password());
    hikari.setMaximumPoolSize(poolSize);
    hikari.setConnectionTimeout(CONNECTION_TIMEOUT.toMillis());
    hikari.setPoolName("once-store");
    // Start even if the database is down for a moment: requests get 503 until it is back.
    hikari.setInitializationFailTimeout(-1);
    HikariDataSource pool = new HikariDataSource(hikari);
    return withClient(
        () -> PostgresStore.builder(pool).tableName(table).autoCreateSchema(true).build(),
        pool::close);
  }

  private static OpenStore withClient(
      java.util.function.Supplier<IdempotencyStore> open, AutoCloseable client) {
    try {
      return new OpenStore(open.get(), client);
    } catch (RuntimeException e) {
      try {
        client.close();
      } catch (Exception suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  @Override
  public void close() throws Exception {
    try {
      store.close();
    } finally {
      resources.close();
    }
  }
}

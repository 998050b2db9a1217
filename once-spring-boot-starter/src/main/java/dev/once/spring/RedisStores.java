package dev.once.spring;

import dev.once.store.IdempotencyStore;
import dev.once.store.StoreUnavailableException;
import dev.once.store.redis.RedisStore;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import java.util.stream.Collectors;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Opens the Redis store on the Lettuce client of the application's connection factory, so that Once
 * connects to the server, Sentinel or Cluster that {@code spring.data.redis.*} describes, with its
 * TLS and credentials. The factory keeps owning the client; the store only closes its own
 * connections.
 */
final class RedisStores {

  private RedisStores() {}

  static IdempotencyStore open(LettuceConnectionFactory factory, OnceProperties.Redis properties) {
    // Spring starts the factory (and creates its client) before beans that depend on it.
    AbstractRedisClient client = factory.getRequiredNativeClient();
    RedisStore.Builder b;
    if (client instanceof RedisClusterClient cluster) {
      b = RedisStore.builder(cluster);
    } else if (client instanceof RedisClient standalone) {
      b = RedisStore.builder(standalone);
    } else {
      throw new IllegalStateException("Unsupported Lettuce client " + client.getClass().getName());
    }
    PolicyMapper.set("once.store.redis.key-prefix", properties.getKeyPrefix(), b::keyPrefix);
    PolicyMapper.set(
        "once.store.redis.command-timeout", properties.getCommandTimeout(), b::commandTimeout);
    PolicyMapper.set(
        "once.store.redis.batches-at-once", properties.getBatchesAtOnce(), b::batchesAtOnce);
    String prefix =
        properties.getKeyPrefix() == null
            ? RedisStore.DEFAULT_KEY_PREFIX
            : properties.getKeyPrefix();
    ChosenStore chosen = describe(factory, "key prefix " + prefix);
    IdempotencyStore store;
    try {
      store = b.build();
    } catch (StoreUnavailableException e) {
      throw chosen.unreachable(e, UNREACHABLE_ACTION);
    }
    chosen.logChosen();
    return store;
  }

  /** What to do about a Redis that is down at startup. */
  static final String UNREACHABLE_ACTION =
      "Start Redis, or point spring.data.redis.* at one that is up; or set once.store.type"
          + " (jdbc, memory), or define an IdempotencyStore bean.";

  /**
   * The Redis the factory connects to, by its nodes and, but for a Cluster (which has only database
   * 0), the database it selects: never its password.
   */
  private static ChosenStore describe(LettuceConnectionFactory factory, String namespace) {
    if (factory.getClusterConfiguration() != null) {
      return new ChosenStore(
          "Redis Cluster",
          factory.getClusterConfiguration().getClusterNodes().stream()
              .map(n -> n.getHost() + ":" + n.getPort())
              .collect(Collectors.joining(",")),
          namespace);
    }
    if (factory.getSentinelConfiguration() != null
        && factory.getSentinelConfiguration().getMaster() != null) {
      return new ChosenStore(
          "Redis (Sentinel)",
          "master "
              + factory.getSentinelConfiguration().getMaster().getName()
              + " database "
              + factory.getDatabase(),
          namespace);
    }
    return new ChosenStore(
        "Redis",
        factory.getHostName() + ":" + factory.getPort() + " database " + factory.getDatabase(),
        namespace);
  }
}

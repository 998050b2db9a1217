package dev.once.spring;

import dev.once.store.IdempotencyStore;
import dev.once.store.redis.RedisStore;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
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
    return b.build();
  }
}

package dev.once.store.redis;

import dev.once.tck.RequiredServices;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.util.UUID;

/**
 * The machine's Redis at 127.0.0.1:6379, shared by the test classes that use it: one client for the
 * whole test run, and a key prefix of its own for every store so that runs never meet.
 *
 * <p>In a logical database of its own ({@value #DATABASE}), not the default one: the in-flight
 * listing scans the keyspace within a budget of {@code SCAN} pages, as it must, so keys that other
 * programs leave in database 0 (a benchmark's, another module's tests') would hide this run's
 * records from it. A run on the machine once left 400,000 such keys, and the contract's in-flight
 * tests failed.
 */
final class LocalRedis {

  static final int PORT = 6379;
  static final int DATABASE = 9;

  private static RedisClient client;
  private static StatefulRedisConnection<byte[], byte[]> raw;

  private LocalRedis() {}

  /**
   * Skips (or, when services are required, fails) the calling test class if the Redis is not there.
   */
  static synchronized RedisClient client() {
    RequiredServices.assume(RedisServerProcess.pings(PORT), "Redis at 127.0.0.1:" + PORT);
    if (client == null) {
      client = RedisClient.create("redis://127.0.0.1:" + PORT + "/" + DATABASE);
      Runtime.getRuntime()
          .addShutdownHook(new Thread(LocalRedis::shutdown, "once-test-redis-shutdown"));
    }
    return client;
  }

  /** Plain commands on the same Redis, for looking behind the store's back. */
  static synchronized RedisCommands<byte[], byte[]> raw() {
    if (raw == null) {
      raw = client().connect(ByteArrayCodec.INSTANCE);
    }
    return raw.sync();
  }

  static String uniquePrefix() {
    return "once-test:" + UUID.randomUUID().toString().substring(0, 8) + ":";
  }

  private static synchronized void shutdown() {
    if (client != null) {
      client.shutdown();
    }
  }
}

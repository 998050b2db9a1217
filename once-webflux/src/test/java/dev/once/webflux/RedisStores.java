package dev.once.webflux;

import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.redis.RedisStore;
import dev.once.tck.RequiredServices;
import io.lettuce.core.RedisClient;

/**
 * The machine's Redis as a store of this run's own (a fresh key prefix: other worktrees' builds
 * share the server); closing it shuts its client down.
 */
final class RedisStores {

  private RedisStores() {}

  static IdempotencyStore open() {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
    RedisStore store =
        RedisStore.builder(client)
            .keyPrefix("once-webflux-test-" + Long.toString(System.nanoTime(), 36) + ":")
            .build();
    return new ForwardingStore() {
      @Override
      protected IdempotencyStore delegate() {
        return store;
      }

      @Override
      public void close() {
        try {
          store.close();
        } finally {
          client.shutdown();
        }
      }
    };
  }
}

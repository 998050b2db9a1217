package dev.once.store.redis;

import dev.once.tck.RequiredServices;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.IdempotencyStore;
import dev.once.tck.IdempotencyStoreContract;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The contract kit against a three-primary Redis Cluster this class starts on spare loopback ports. */
class RedisClusterStoreContractTest extends IdempotencyStoreContract {

  private static final String PREFIX = LocalRedis.uniquePrefix();

  private static RedisClusterProcesses cluster;
  private static RedisClusterClient client;

  @BeforeAll
  static void startCluster() {
    RequiredServices.assume(RedisServerProcess.binariesAvailable(), "redis-server and redis-cli on the PATH");
    cluster = RedisClusterProcesses.start();
    client = RedisClusterClient.create(cluster.uris().stream().map(RedisURI::create).toList());
  }

  @AfterAll
  static void stopCluster() {
    if (client != null) {
      client.shutdown();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Override
  protected IdempotencyStore createStore() {
    return RedisStore.builder(client).keyPrefix(PREFIX).build();
  }

  @Test
  void recordsSpreadOverEveryPrimaryByTheirHashTags() {
    for (int i = 0; i < 60; i++) {
      claimed(store.claim(request(newId(), newFingerprint(), LONG, LONG)));
    }

    for (RedisServerProcess node : cluster.nodes()) {
      assertThat(node.cli("--scan", "--pattern", PREFIX + "*").lines().count())
          .as("records on the primary at port %d", node.port()).isPositive();
    }
  }
}

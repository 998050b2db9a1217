package dev.once.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.tck.IdempotencyStoreContract;
import dev.once.tck.RequiredServices;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The contract kit against a three-primary Redis Cluster this class starts on spare loopback ports.
 */
class RedisClusterStoreContractTest extends IdempotencyStoreContract {

  private static final String PREFIX = LocalRedis.uniquePrefix();

  private static RedisClusterProcesses cluster;
  private static RedisClusterClient client;

  @BeforeAll
  static void startCluster() {
    RequiredServices.assume(
        RedisServerProcess.binariesAvailable(), "redis-server and redis-cli on the PATH");
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

  /** A prefix of its own: the listing scans every primary for records under its prefix. */
  @Override
  protected IdempotencyStore createIsolatedStore() {
    return RedisStore.builder(client).keyPrefix(LocalRedis.uniquePrefix()).build();
  }

  /** State {@code A}: one this version does not know, as a later version might add. */
  @Override
  protected boolean makeForeign(RecordId id) {
    try (var connection = client.connect(io.lettuce.core.codec.ByteArrayCodec.INSTANCE)) {
      connection
          .sync()
          .hset(
              new KeyLayout(PREFIX).recordKey(id),
              "s".getBytes(StandardCharsets.US_ASCII),
              "A".getBytes(StandardCharsets.US_ASCII));
    }
    return true;
  }

  @Test
  void recordsSpreadOverEveryPrimaryByTheirHashTags() {
    for (int i = 0; i < 60; i++) {
      claimed(store.claim(request(newId(), newFingerprint(), LONG, LONG)));
    }

    for (RedisServerProcess node : cluster.nodes()) {
      assertThat(node.cli("--scan", "--pattern", PREFIX + "*").lines().count())
          .as("records on the primary at port %d", node.port())
          .isPositive();
    }
  }

  @Test
  void aBatchedHeartbeatRunsOneScriptPerHashSlot() {
    List<RecordId> inFourSlots = idsInTheFourFullestSlots();
    List<LeaseToken> held = new ArrayList<>();
    for (RecordId id : inFourSlots) {
      held.add(
          new LeaseToken(
              id, claimed(store.claim(request(id, newFingerprint(), LONG, LONG))).token()));
    }
    long before = scriptCalls();

    assertThat(store.heartbeat(held, LONG)).hasSize(held.size());

    assertThat(scriptCalls() - before)
        .as("scripts run for %d leases in 4 slots", held.size())
        .isEqualTo(4);
  }

  /**
   * Ids whose records share hash slots: of 100,000 keys under one scope, those of the four slots
   * most of them fall in.
   */
  private static List<RecordId> idsInTheFourFullestSlots() {
    KeyLayout layout = new KeyLayout(PREFIX);
    Scope scope = Scope.of("tenant-" + UUID.randomUUID(), "route");
    Map<Integer, List<RecordId>> bySlot = new HashMap<>();
    for (int i = 0; i < 100_000; i++) {
      RecordId id = RecordId.of(scope, IdempotencyKey.of("key-" + i));
      bySlot
          .computeIfAbsent(SlotHash.getSlot(layout.recordKey(id)), slot -> new ArrayList<>())
          .add(id);
    }
    return bySlot.values().stream()
        .sorted(Comparator.comparingInt(List<RecordId>::size).reversed())
        .limit(4)
        .flatMap(List::stream)
        .toList();
  }

  private static long scriptCalls() {
    return cluster.nodes().stream().mapToLong(RedisServerProcess::scriptCalls).sum();
  }
}

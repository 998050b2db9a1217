package dev.once.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A three-primary Redis Cluster a test owns: three {@link RedisServerProcess}es with cluster mode
 * on, joined by {@code redis-cli --cluster create} and waited for until every node reports {@code
 * cluster_state:ok}.
 */
final class RedisClusterProcesses implements AutoCloseable {

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

  private final List<RedisServerProcess> nodes = new ArrayList<>();

  private RedisClusterProcesses() {}

  static RedisClusterProcesses start() {
    RedisClusterProcesses cluster = new RedisClusterProcesses();
    try {
      for (int i = 0; i < 3; i++) {
        cluster.nodes.add(
            RedisServerProcess.start(
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "5000",
                "--appendonly",
                "no"));
      }
      List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
      for (RedisServerProcess node : cluster.nodes) {
        create.add("127.0.0.1:" + node.port());
      }
      create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
      RedisServerProcess.run(create);
      cluster.awaitReady();
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  /** The seed URIs for a {@code RedisClusterClient}. */
  List<String> uris() {
    return nodes.stream().map(RedisServerProcess::uri).toList();
  }

  List<RedisServerProcess> nodes() {
    return List.copyOf(nodes);
  }

  @Override
  public void close() {
    nodes.forEach(RedisServerProcess::close);
    nodes.clear();
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (nodes.stream().allMatch(n -> n.cli("cluster", "info").contains("cluster_state:ok"))) {
        return;
      }
      RedisServerProcess.sleep(100);
    }
    throw new IllegalStateException(
        "the test cluster did not reach cluster_state:ok within " + READY_TIMEOUT);
  }
}

package dev.once.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The gateway as a child JVM on a fixed loopback port, in front of a {@link LedgerUpstream}, over
 * the embedded store (in its data directory), a PostgreSQL the harness owns, or a redis-server the
 * harness owns.
 */
final class GatewayTarget implements Target {

  enum Store {
    EMBEDDED,
    POSTGRES,
    REDIS
  }

  private final Store store;
  private final Duration lease;
  private final Path dir;
  private final LedgerUpstream upstream;
  private final @Nullable PostgresCluster postgres;
  private final @Nullable RedisServer redis;
  private final int port;
  private final ChildProcess gateway;

  private GatewayTarget(
      Store store,
      Duration lease,
      Path dir,
      LedgerUpstream upstream,
      @Nullable PostgresCluster postgres,
      @Nullable RedisServer redis,
      int port,
      ChildProcess gateway) {
    this.store = store;
    this.lease = lease;
    this.dir = dir;
    this.upstream = upstream;
    this.postgres = postgres;
    this.redis = redis;
    this.port = port;
    this.gateway = gateway;
  }

  /**
   * Starts the store, the upstream and the gateway.
   *
   * @param mainClass the gateway's main class ({@code dev.once.gateway.Gateway}; tests substitute a
   *     deliberately broken wiring to prove the audit catches it)
   * @param jvmOptions extra options of the gateway JVM
   */
  static GatewayTarget start(
      Store store,
      LedgerUpstream.Mode mode,
      Duration lease,
      String mainClass,
      List<String> jvmOptions) {
    Path dir = null;
    LedgerUpstream upstream = null;
    PostgresCluster postgres = null;
    RedisServer redis = null;
    try {
      dir = Files.createTempDirectory("once-chaos-gateway-");
      upstream = LedgerUpstream.start(mode);
      String storeUrl =
          switch (store) {
            case EMBEDDED -> "embedded";
            case POSTGRES -> {
              postgres = PostgresCluster.single();
              yield "postgres://postgres@127.0.0.1:" + postgres.primaryPort() + "/postgres";
            }
            case REDIS -> {
              redis = RedisServer.start();
              yield redis.url();
            }
          };
      Path yaml = dir.resolve("gateway.yaml");
      // The upstream timeout is far longer than the slow requests: the only abandoned leases are a
      // crashed gateway's. The gateway heartbeats while it waits, so a slow upstream keeps its
      // lease.
      Files.writeString(
          yaml,
          """
          upstream-timeout: 60s
          access-log: false
          defaults:
            lease: %dms
          routes:
            - pattern: /charges
              key-required: true
          """
              .formatted(lease.toMillis()));
      int port = Commands.freePort();
      List<String> command = ChildProcess.javaCommand(jvmOptions);
      command.addAll(
          List.of(
              "-cp",
              System.getProperty("java.class.path"),
              mainClass,
              "--config",
              yaml.toString(),
              "--bind",
              "127.0.0.1",
              "--port",
              Integer.toString(port),
              "--management-port",
              "0",
              "--upstream",
              upstream.url(),
              "--store",
              storeUrl,
              "--data-dir",
              dir.resolve("data").toString(),
              "--durability",
              "process-crash",
              "--store-pool-size",
              "8"));
      ChildProcess gateway =
          new ChildProcess(
              "gateway-" + port,
              command,
              Pattern.compile("once-gateway started"),
              Duration.ofMinutes(3),
              dir.resolve("gateway.log"));
      GatewayTarget target =
          new GatewayTarget(store, lease, dir, upstream, postgres, redis, port, gateway);
      gateway.start();
      return target;
    } catch (IOException e) {
      closeAll(upstream, postgres, redis, dir);
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      closeAll(upstream, postgres, redis, dir);
      throw e;
    }
  }

  @Override
  public String name() {
    return "gateway/"
        + store.name().toLowerCase(java.util.Locale.ROOT)
        + " ("
        + upstream.mode().name().toLowerCase(java.util.Locale.ROOT)
        + " upstream)";
  }

  @Override
  public int port() {
    return port;
  }

  @Override
  public Duration lease() {
    return lease;
  }

  @Override
  public HttpRequest.Builder request(URI base, long n, boolean slow) {
    // Slower than the lease: the gateway must keep the lease alive by heartbeats.
    String query = slow ? "?delay=" + lease.multipliedBy(2).toMillis() : "";
    return HttpRequest.newBuilder(base.resolve("/charges" + query))
        .header("Content-Type", "application/json")
        .header("Api-Key", "chaos-merchant")
        .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":" + (n + 1) + "}"));
  }

  @Override
  public boolean hasStoreProcess() {
    return store != Store.EMBEDDED;
  }

  @Override
  public void crashAndRestart() {
    gateway.killAndRestart();
  }

  @Override
  public void crashAndRestartStore() {
    switch (store) {
      case POSTGRES ->
          Objects.requireNonNull(postgres, "a POSTGRES target has its cluster")
              .crashAndRestartPrimary();
      case REDIS ->
          Objects.requireNonNull(redis, "a REDIS target has its server").crashAndRestart();
      case EMBEDDED ->
          throw new IllegalStateException("the embedded store lives in the gateway process");
    }
  }

  @Override
  public Map<Long, Ledger> ledger() {
    Map<Long, Ledger> ledger = new HashMap<>();
    upstream
        .deliveries()
        .forEach(
            (amount, list) -> {
              List<Delivery> deliveries = new ArrayList<>();
              int effects = 0;
              for (LedgerUpstream.Delivery d : list) {
                deliveries.add(new Delivery(d.atNanos(), d.token()));
                effects += d.charged() ? 1 : 0;
              }
              ledger.put(amount, new Ledger(effects, deliveries));
            });
    return ledger;
  }

  @Override
  public void close() {
    gateway.close();
    closeAll(upstream, postgres, redis, dir);
  }

  private static void closeAll(
      @Nullable LedgerUpstream upstream,
      @Nullable PostgresCluster postgres,
      @Nullable RedisServer redis,
      @Nullable Path dir) {
    if (upstream != null) {
      upstream.close();
    }
    if (postgres != null) {
      postgres.close();
    }
    if (redis != null) {
      redis.close();
    }
    Commands.deleteTree(dir);
  }
}

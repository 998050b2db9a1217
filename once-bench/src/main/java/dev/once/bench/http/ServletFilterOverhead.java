package dev.once.bench.http;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.Once;
import dev.once.store.InMemoryStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import io.lettuce.core.RedisClient;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What {@code OnceFilter} costs a servlet application: the same trivial POST handler on one Jetty,
 * bare and behind the filter (in-memory store; PostgreSQL store), plus the handler making two bare
 * PostgreSQL round trips ({@code SELECT 1}) and two bare durable writes (an insert and an update,
 * each its own commit): the floors of the store's claim and completion. Configurations run in
 * interleaved rounds (the starting one rotates) so that load from other processes falls on all of
 * them alike; the report gives each configuration's median throughput over the rounds and its p50
 * and p99 latency over all measured requests.
 *
 * <pre>
 * [ONCE_BENCH_REDIS=redis://127.0.0.1:6379] java -cp ... dev.once.bench.http.ServletFilterOverhead &lt;jdbc-url|-&gt; &lt;rounds&gt; &lt;seconds&gt; &lt;connections,...&gt;
 * </pre>
 *
 * <p>With {@code ONCE_BENCH_REDIS} set, also the handler plus two bare Redis {@code SET}s and the
 * filter over the Redis store.
 */
public final class ServletFilterOverhead {

  private static final int MAX_REQUESTS_PER_PHASE = 400_000;

  private ServletFilterOverhead() {}

  public static void main(String[] args) throws Exception {
    String jdbcUrl = args.length > 0 ? args[0] : "-";
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 3;
    List<Integer> connectionCounts = new ArrayList<>();
    for (String c : (args.length > 3 ? args[3] : "1,8").split(",")) {
      connectionCounts.add(Integer.parseInt(c));
    }
    // An experiment, not a configuration users get: without the store's NOTIFY triggers,
    // completions no longer take PostgreSQL's notification lock and can share group commits.
    boolean withoutNotifyTriggers = args.length > 4 && args[4].equals("without-notify-triggers");
    // A Redis to compare with, from the environment so that the positional arguments stay as they
    // were.
    String redisUrl = System.getenv("ONCE_BENCH_REDIS");

    HikariDataSource pool = jdbcUrl.equals("-") ? null : pool(jdbcUrl);
    Once memory = Once.of(InMemoryStore.builder().maxRecords(20_000_000).build());
    Once postgres = null;
    BenchServer server = new BenchServer().bare("/bare").guarded("/memory", memory);
    Map<String, String> configs = new LinkedHashMap<>();
    configs.put("bare handler", "/bare/pay");
    configs.put("filter, in-memory store", "/memory/pay");
    if (pool != null) {
      truncate(pool);
      postgres =
          Once.of(
              PostgresStore.builder(pool)
                  .tableName("once_records_bench_http")
                  .autoCreateSchema(true)
                  .notifications(!withoutNotifyTriggers)
                  .build());
      if (withoutNotifyTriggers) {
        dropNotifyTriggers(pool);
      }
      server
          .guarded("/postgres", postgres)
          .withRoundTrips("/reads", pool)
          .withDurableWrites("/writes", pool);
      configs.put("handler + 2 bare PostgreSQL SELECT 1", "/reads/pay");
      configs.put("handler + 2 bare PostgreSQL commits", "/writes/pay");
      configs.put("filter, PostgreSQL store", "/postgres/pay");
    }
    RedisClient redisClient = null;
    Once redis = null;
    if (redisUrl != null && !redisUrl.isBlank()) {
      redisClient = RedisClient.create(redisUrl);
      redis = Once.of(RedisStore.builder(redisClient).keyPrefix("once-bench-http:").build());
      server
          .withRedisWrites("/redis-writes", redisClient.connect().sync())
          .guarded("/redis", redis);
      configs.put("handler + 2 bare Redis SET", "/redis-writes/pay");
      configs.put("filter, Redis store", "/redis/pay");
    }
    int port = server.start();
    try {
      System.out.printf(
          Locale.ROOT,
          "Servlet filter overhead: %d rounds x %.1f s per configuration, Jetty 12, loopback%n",
          rounds,
          seconds);
      for (int connections : connectionCounts) {
        report(connections, measure(port, configs, connections, rounds, seconds));
      }
    } finally {
      server.close();
      memory.close();
      if (postgres != null) {
        postgres.close();
      }
      if (pool != null) {
        pool.close();
      }
      if (redis != null) {
        redis.close();
      }
      if (redisClient != null) {
        redisClient.shutdown();
      }
    }
  }

  /** The configuration named {@code name}, one of the map's own keys. */
  private static String config(Map<String, String> configs, String name) {
    return Objects.requireNonNull(configs.get(name), name);
  }

  private static Map<String, List<LoopbackLoad.Result>> measure(
      int port, Map<String, String> configs, int connections, int rounds, double seconds)
      throws Exception {
    Map<String, List<LoopbackLoad.Result>> results = new LinkedHashMap<>();
    List<String> names = new ArrayList<>(configs.keySet());
    for (String name : names) {
      results.put(name, new ArrayList<>());
      LoopbackLoad.run(
          port, config(configs, name), connections, 1.5, MAX_REQUESTS_PER_PHASE); // warm-up
    }
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < names.size(); i++) {
        String name = names.get((i + r) % names.size());
        Objects.requireNonNull(results.get(name))
            .add(
                LoopbackLoad.run(
                    port, config(configs, name), connections, seconds, MAX_REQUESTS_PER_PHASE));
      }
    }
    return results;
  }

  private static void report(int connections, Map<String, List<LoopbackLoad.Result>> results) {
    System.out.printf(
        Locale.ROOT,
        "%n%d connection(s)%n%-42s %12s %10s %10s %8s%n",
        connections,
        "configuration",
        "req/s",
        "p50 us",
        "p99 us",
        "errors");
    double bareThroughput = 0;
    double bareP50 = 0;
    for (Map.Entry<String, List<LoopbackLoad.Result>> e : results.entrySet()) {
      List<LoopbackLoad.Result> rs = e.getValue();
      double throughput =
          median(rs.stream().mapToDouble(LoopbackLoad.Result::throughput).toArray());
      long[] all =
          rs.stream().flatMapToLong(r -> java.util.Arrays.stream(r.latenciesNanos())).toArray();
      double p50 = LoopbackLoad.percentileMicros(all, 0.50);
      double p99 = LoopbackLoad.percentileMicros(all, 0.99);
      long errors = rs.stream().mapToLong(LoopbackLoad.Result::errors).sum();
      if (bareThroughput == 0) {
        bareThroughput = throughput;
        bareP50 = p50;
      }
      System.out.printf(
          Locale.ROOT,
          "%-42s %12.0f %10.0f %10.0f %8d   (%+.1f%% req/s, %+.0f us p50 vs bare)%n",
          e.getKey(),
          throughput,
          p50,
          p99,
          errors,
          100 * (throughput / bareThroughput - 1),
          p50 - bareP50);
    }
  }

  private static double median(double[] values) {
    java.util.Arrays.sort(values);
    int n = values.length;
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  private static HikariDataSource pool(String url) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername("postgres");
    config.setPassword("");
    config.setMaximumPoolSize(16);
    config.setPoolName("bench");
    return new HikariDataSource(config);
  }

  private static void dropNotifyTriggers(HikariDataSource pool) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "DROP TRIGGER IF EXISTS once_records_bench_http_changed ON once_records_bench_http");
      s.execute(
          "DROP TRIGGER IF EXISTS once_records_bench_http_released ON once_records_bench_http");
    }
  }

  private static void truncate(HikariDataSource pool) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS once_records_bench_http");
      s.execute("DROP TABLE IF EXISTS once_bench_floor");
      s.execute("CREATE TABLE once_bench_floor (k varchar(32) PRIMARY KEY, v int NOT NULL)");
    }
  }
}

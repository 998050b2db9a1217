package dev.once.bench.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.MariaDbStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import dev.once.tck.FaultProxy;
import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's gathered claims and completions under a crowd: N threads each run {@code
 * Once.execute} one after another, on one store, for a fixed time after a warm-up: with a fresh key
 * each ({@code fresh}, the default), or replaying keys finished before the crowd starts, picked at
 * random from 10,000 ({@code spread}) or all one ({@code hot}). Prints calls per second, and this
 * process's CPU time and the store server's (its processes', read from /proc) per execution. The
 * store's batches are what the engine's gathering makes of the crowd, so an A/B of the gathering
 * puts another build's once-core first on the class path, in the same run.
 *
 * <pre>
 * java -cp ... dev.once.bench.jdbc.GatheredCalls postgres|mariadb|redis[:N] [threads] [seconds]
 *     [rtt-us] [fresh|spread|hot]
 * </pre>
 *
 * {@code redis:N} builds the store with {@code batchesAtOnce(N)}.
 *
 * <p>PostgreSQL at 127.0.0.1:5432/test (postgres), MariaDB at 127.0.0.1:3306/test (root), Redis at
 * 127.0.0.1:6379; a table (or key prefix) of its own, dropped at the end. With {@code rtt-us} above
 * zero the store is reached through a loopback {@link FaultProxy} that holds every answer back that
 * long: a store across a network, one round trip at a time, where a batch that takes a round trip
 * per record grows slower with its size.
 */
public final class GatheredCalls {

  private static final Fingerprint FP = new Fingerprint(1, "00112233445566778899aabbccddeeff");
  private static final int SPREAD = 10_000;

  /** Which keys the crowd's calls name. */
  private enum Keys {
    FRESH,
    SPREAD,
    HOT
  }

  private GatheredCalls() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1 || args.length > 5) {
      System.err.println(
          "usage: GatheredCalls postgres|mariadb|redis[:N] [threads] [seconds] [rtt-us]"
              + " [fresh|spread|hot]");
      System.exit(2);
    }
    String[] store = args[0].split(":", 2);
    String kind = store[0];
    int batchesAtOnce = store.length > 1 ? Integer.parseInt(store[1]) : 1;
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 50;
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    long rttMicros = args.length > 3 ? Long.parseLong(args[3]) : 0;
    Keys keys = args.length > 4 ? Keys.valueOf(args[4].toUpperCase(Locale.ROOT)) : Keys.FRESH;
    String table = "once_bench_gathered_" + ProcessHandle.current().pid();
    int serverPort =
        switch (kind) {
          case "redis" -> 6379;
          case "mariadb" -> 3306;
          default -> 5432;
        };
    try (FaultProxy proxy = FaultProxy.to(serverPort)) {
      int port = serverPort;
      if (rttMicros > 0) {
        proxy.delayResponses(1_000_000, Duration.ofNanos(rttMicros * 1_000));
        port = proxy.port();
      }
      run(kind, batchesAtOnce, table, port, threads, seconds, rttMicros, keys);
    }
  }

  private static void run(
      String kind,
      int batchesAtOnce,
      String table,
      int port,
      int threads,
      int seconds,
      long rttMicros,
      Keys keys)
      throws Exception {
    String label =
        kind
            + ", "
            + keys.name().toLowerCase(Locale.ROOT)
            + " keys"
            + (rttMicros > 0 ? ", " + rttMicros + " us a round trip" : "")
            + (batchesAtOnce > 1 ? ", " + batchesAtOnce + " batches at once" : "");
    if (kind.equals("redis")) {
      RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
      try {
        run(
            label,
            kind,
            RedisStore.builder(client).keyPrefix(table + ":").batchesAtOnce(batchesAtOnce).build(),
            threads,
            seconds,
            keys);
      } finally {
        client.shutdown();
      }
      return;
    }
    boolean maria = kind.equals("mariadb");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(
        maria
            ? "jdbc:mariadb://127.0.0.1:" + port + "/test"
            : "jdbc:postgresql://127.0.0.1:" + port + "/test");
    config.setUsername(maria ? "root" : "postgres");
    config.setMaximumPoolSize(10);
    try (HikariDataSource pool = new HikariDataSource(config)) {
      try {
        try (Connection c = pool.getConnection()) {
          label += String.format(" (SELECT 1: %.0f us median)", selectOneMicros(c));
        }
        run(
            label,
            kind,
            maria
                ? MariaDbStore.builder(pool).tableName(table).autoCreateSchema(true).build()
                : PostgresStore.builder(pool).tableName(table).autoCreateSchema(true).build(),
            threads,
            seconds,
            keys);
      } finally {
        try (Connection c = pool.getConnection();
            Statement s = c.createStatement()) {
          s.execute("DROP TABLE IF EXISTS " + table);
          if (!maria) {
            s.execute("DROP SEQUENCE IF EXISTS " + table + "_seq");
          }
        }
      }
    }
  }

  private static void run(
      String label, String kind, IdempotencyStore store, int threads, int seconds, Keys keys)
      throws InterruptedException {
    Scope scope = Scope.of("bench");
    AtomicLong fresh = new AtomicLong();
    LongAdder executed = new LongAdder();
    AtomicBoolean counting = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    try (Once once = Once.of(store)) {
      if (keys != Keys.FRESH) {
        finish(once, scope, keys == Keys.HOT ? 1 : SPREAD, threads);
      }
      Thread[] crowd = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        crowd[t] =
            new Thread(
                () -> {
                  while (!stop.get()) {
                    IdempotencyKey key =
                        switch (keys) {
                          case FRESH -> IdempotencyKey.of("k" + fresh.incrementAndGet());
                          case SPREAD ->
                              IdempotencyKey.of("r" + ThreadLocalRandom.current().nextInt(SPREAD));
                          case HOT -> IdempotencyKey.of("r0");
                        };
                    ExecutionResult<String> r =
                        once.execute(scope, key, FP, ResultCodec.utf8(), ctx -> "ok");
                    boolean expected =
                        keys == Keys.FRESH
                            ? r instanceof ExecutionResult.Executed
                            : r instanceof ExecutionResult.Replayed;
                    if (!expected) {
                      throw new IllegalStateException("unexpected answer for " + key + ": " + r);
                    }
                    if (counting.get()) {
                      executed.increment();
                    }
                  }
                },
                "crowd-" + t);
        crowd[t].start();
      }
      Thread.sleep(5_000); // warm-up: the JIT, the pool, the store's statements
      long cpu0 = cpuNanos();
      long server0 = serverTicks(kind);
      long t0 = System.nanoTime();
      counting.set(true);
      Thread.sleep(seconds * 1_000L);
      counting.set(false);
      long t1 = System.nanoTime();
      long cpu1 = cpuNanos();
      long server1 = serverTicks(kind);
      stop.set(true);
      for (Thread t : crowd) {
        t.join(30_000);
      }
      long n = executed.sum();
      System.out.printf(
          "%s, %d threads: %.0f calls/s; CPU per call: %.0f us here, %.0f us in the"
              + " store server%n",
          label,
          threads,
          n / ((t1 - t0) / 1e9),
          (cpu1 - cpu0) / 1e3 / Math.max(1, n),
          (server1 - server0) * 10_000.0 / Math.max(1, n));
    }
  }

  /** Runs keys {@code r0} to {@code r<count - 1>} once each, on {@code threads} threads. */
  private static void finish(Once once, Scope scope, int count, int threads)
      throws InterruptedException {
    AtomicLong next = new AtomicLong();
    Thread[] fill = new Thread[Math.min(threads, count)];
    for (int t = 0; t < fill.length; t++) {
      fill[t] =
          new Thread(
              () -> {
                for (long k; (k = next.getAndIncrement()) < count; ) {
                  once.execute(
                      scope, IdempotencyKey.of("r" + k), FP, ResultCodec.utf8(), ctx -> "ok");
                }
              });
      fill[t].start();
    }
    for (Thread t : fill) {
      t.join(120_000);
    }
  }

  /** The median time of a {@code SELECT 1}, one after another: the round trip as measured. */
  private static double selectOneMicros(Connection c) throws java.sql.SQLException {
    long[] nanos = new long[201];
    try (java.sql.PreparedStatement ps = c.prepareStatement("SELECT 1")) {
      for (int i = 0; i < nanos.length; i++) {
        long t0 = System.nanoTime();
        ps.executeQuery().close();
        nanos[i] = System.nanoTime() - t0;
      }
    }
    java.util.Arrays.sort(nanos);
    return nanos[nanos.length / 2] / 1e3;
  }

  /**
   * The store server's CPU time so far, in clock ticks (10 ms each on Linux): utime + stime of
   * every process of the server's name.
   */
  private static long serverTicks(String kind) {
    String name =
        switch (kind) {
          case "redis" -> "redis-server";
          case "mariadb" -> "mariadbd";
          default -> "postgres";
        };
    long ticks = 0;
    for (ProcessHandle p : (Iterable<ProcessHandle>) ProcessHandle.allProcesses()::iterator) {
      try {
        Path stat = Path.of("/proc", Long.toString(p.pid()), "stat");
        String line = Files.readString(stat);
        int close = line.lastIndexOf(')');
        if (!line.substring(line.indexOf('(') + 1, close).equals(name)) {
          continue;
        }
        // Fields after the name: state is the 3rd of stat, utime the 14th, stime the 15th.
        String[] f = line.substring(close + 2).split(" ");
        ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
      } catch (IOException | RuntimeException gone) {
        // the process ended, or is not ours to read
      }
    }
    return ticks;
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}

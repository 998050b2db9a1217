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
import io.lettuce.core.RedisClient;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine's gathered claims and completions under a crowd: N threads each run {@code
 * Once.execute} with a fresh key, one after another, on one store, for a fixed time after a
 * warm-up. Prints executions per second, and this process's CPU time and the store server's (its
 * processes', read from /proc) per execution. The store's batches are what the engine's gathering
 * makes of the crowd, so an A/B of the gathering puts another build's once-core first on the class
 * path, in the same run.
 *
 * <pre>
 * java -cp ... dev.once.bench.jdbc.GatheredCalls postgres|mariadb|redis [threads] [seconds]
 * </pre>
 *
 * PostgreSQL at 127.0.0.1:5432/test (postgres), MariaDB at 127.0.0.1:3306/test (root), Redis at
 * 127.0.0.1:6379; a table (or key prefix) of its own, dropped at the end.
 */
public final class GatheredCalls {

  private static final Fingerprint FP = new Fingerprint(1, "00112233445566778899aabbccddeeff");

  private GatheredCalls() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1 || args.length > 3) {
      System.err.println("usage: GatheredCalls postgres|mariadb|redis [threads] [seconds]");
      System.exit(2);
    }
    String kind = args[0];
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 50;
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 10;
    String table = "once_bench_gathered_" + ProcessHandle.current().pid();
    if (kind.equals("redis")) {
      RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
      try {
        run(kind, RedisStore.builder(client).keyPrefix(table + ":").build(), threads, seconds);
      } finally {
        client.shutdown();
      }
      return;
    }
    boolean maria = kind.equals("mariadb");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(
        maria ? "jdbc:mariadb://127.0.0.1:3306/test" : "jdbc:postgresql://127.0.0.1:5432/test");
    config.setUsername(maria ? "root" : "postgres");
    config.setMaximumPoolSize(10);
    try (HikariDataSource pool = new HikariDataSource(config)) {
      try {
        run(
            kind,
            maria
                ? MariaDbStore.builder(pool).tableName(table).autoCreateSchema(true).build()
                : PostgresStore.builder(pool).tableName(table).autoCreateSchema(true).build(),
            threads,
            seconds);
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

  private static void run(String kind, IdempotencyStore store, int threads, int seconds)
      throws InterruptedException {
    Scope scope = Scope.of("bench");
    AtomicLong keys = new AtomicLong();
    LongAdder executed = new LongAdder();
    AtomicBoolean counting = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    try (Once once = Once.of(store)) {
      Thread[] crowd = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        crowd[t] =
            new Thread(
                () -> {
                  while (!stop.get()) {
                    IdempotencyKey key = IdempotencyKey.of("k" + keys.incrementAndGet());
                    ExecutionResult<String> r =
                        once.execute(scope, key, FP, ResultCodec.utf8(), ctx -> "ok");
                    if (!(r instanceof ExecutionResult.Executed)) {
                      throw new IllegalStateException("a fresh key was not executed: " + r);
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
          "%s, %d threads: %.0f executions/s; CPU per execution: %.0f us here, %.0f us in the"
              + " store server%n",
          kind,
          threads,
          n / ((t1 - t0) / 1e9),
          (cpu1 - cpu0) / 1e3 / Math.max(1, n),
          (server1 - server0) * 10_000.0 / Math.max(1, n));
    }
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

package dev.once.store.jdbc;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The measurement behind the embedded store's engine: claim+complete throughput and crash safety
 * (SIGKILL of a child JVM mid-loop) for H2 and SQLite in the configurations worth considering. Each
 * iteration is what the embedded store does: a transaction that draws a token and inserts the
 * claim, then a transaction that completes it; both commit before the next step.
 *
 * <pre>
 * java -cp "$(cat cp.txt):target/classes:target/test-classes" dev.once.store.jdbc.EmbeddedEngineComparison [seconds]
 * java -cp ... dev.once.store.jdbc.EmbeddedEngineComparison store [seconds] [threads,...]   # EmbeddedStore itself
 * </pre>
 */
public final class EmbeddedEngineComparison {

  enum Engine {
    SQLITE_WAL_FULL("jdbc:sqlite:%s/once.db", "PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"),
    SQLITE_WAL_NORMAL(
        "jdbc:sqlite:%s/once.db", "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"),
    H2_DEFAULT("jdbc:h2:file:%s/once"),
    H2_WRITE_DELAY_0("jdbc:h2:file:%s/once;WRITE_DELAY=0");

    final String url;
    final String[] init;

    Engine(String url, String... init) {
      this.url = url;
      this.init = init;
    }

    Connection open(Path dir) throws SQLException {
      Connection c = DriverManager.getConnection(String.format(url, dir.toAbsolutePath()));
      try (Statement s = c.createStatement()) {
        for (String sql : init) {
          s.execute(sql);
        }
        s.execute(
            "CREATE TABLE IF NOT EXISTS rec (scope VARCHAR(512) NOT NULL, idem_key VARCHAR(255) NOT NULL,"
                + " state VARCHAR(16) NOT NULL, token BIGINT NOT NULL, result BLOB, PRIMARY KEY (scope, idem_key))");
        s.execute("CREATE TABLE IF NOT EXISTS seq (id INT PRIMARY KEY, v BIGINT NOT NULL)");
        s.execute(
            name().startsWith("H2")
                ? "MERGE INTO seq KEY (id) VALUES (1, 0)"
                : "INSERT OR IGNORE INTO seq VALUES (1, 0)");
      }
      c.setAutoCommit(false);
      c.commit();
      return c;
    }
  }

  private EmbeddedEngineComparison() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("child")) {
      child(Engine.valueOf(args[1]), Path.of(args[2]));
      return;
    }
    if (args.length > 0 && args[0].equals("store")) {
      int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
      int[] threads =
          args.length > 2
              ? java.util.Arrays.stream(args[2].split(",")).mapToInt(Integer::parseInt).toArray()
              : new int[] {1};
      for (int t : threads) {
        for (EmbeddedStore.Durability d : EmbeddedStore.Durability.values()) {
          System.out.printf(
              "EmbeddedStore %-24s %3d thread(s) %8.0f claim+complete/s%n",
              d, t, storeThroughput(d, seconds, t));
        }
      }
      return;
    }
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    System.out.printf("%-18s %12s %16s %s%n", "engine", "ops/s", "crash: lost/seen", "");
    for (Engine e : Engine.values()) {
      double rate = throughput(e, seconds);
      int[] crash = crash(e);
      System.out.printf("%-18s %12.0f %10d/%-6d%n", e, rate, crash[0], crash[1]);
    }
  }

  /** One claim+complete, the way the embedded store commits them. */
  static void claimAndComplete(
      Connection c,
      PreparedStatement next,
      PreparedStatement read,
      PreparedStatement insert,
      PreparedStatement complete,
      String key)
      throws SQLException {
    next.executeUpdate();
    long token;
    try (ResultSet rs = read.executeQuery()) {
      rs.next();
      token = rs.getLong(1);
    }
    insert.setString(1, key);
    insert.setLong(2, token);
    insert.executeUpdate();
    c.commit();
    complete.setBytes(1, new byte[200]);
    complete.setString(2, key);
    complete.setLong(3, token);
    if (complete.executeUpdate() != 1) {
      throw new IllegalStateException("complete did not match");
    }
    c.commit();
  }

  static double throughput(Engine e, int seconds) throws Exception {
    Path dir = Files.createTempDirectory("once-" + e);
    try (Connection c = e.open(dir);
        Statements s = new Statements(c)) {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      long start = System.nanoTime();
      long n = 0;
      while (System.nanoTime() < end) {
        claimAndComplete(c, s.next, s.read, s.insert, s.complete, "k" + n++);
      }
      return n / ((System.nanoTime() - start) / 1e9);
    }
  }

  /** The real store, one thread: what the gateway's default gets per request. */
  static double storeThroughput(EmbeddedStore.Durability durability, int seconds, int threads)
      throws Exception {
    Path dir = Files.createTempDirectory("once-store-" + durability);
    dev.once.Fingerprint fp = new dev.once.Fingerprint(1, "00112233445566778899aabbccddeeff");
    try (EmbeddedStore store = EmbeddedStore.builder(dir).durability(durability).build()) {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      long start = System.nanoTime();
      java.util.concurrent.atomic.AtomicLong n = new java.util.concurrent.atomic.AtomicLong();
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Thread w =
            new Thread(
                () -> {
                  while (System.nanoTime() < end) {
                    dev.once.store.RecordId id =
                        dev.once.store.RecordId.of(
                            dev.once.Scope.GLOBAL,
                            dev.once.IdempotencyKey.of("k" + n.incrementAndGet()));
                    var c =
                        (dev.once.store.ClaimResult.Claimed)
                            store.claim(
                                new dev.once.store.ClaimRequest(
                                    id,
                                    fp,
                                    java.time.Duration.ofMinutes(1),
                                    java.time.Duration.ofHours(1)));
                    store.complete(id, c.token(), new byte[200], java.time.Duration.ofHours(1));
                  }
                });
        w.start();
        workers.add(w);
      }
      for (Thread w : workers) {
        w.join();
      }
      return n.get() / ((System.nanoTime() - start) / 1e9);
    }
  }

  /**
   * Runs a child that claims and completes in a loop, SIGKILLs it, and counts confirmed completions
   * lost.
   */
  static int[] crash(Engine e) throws Exception {
    Path dir = Files.createTempDirectory("once-crash-" + e);
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                EmbeddedEngineComparison.class.getName(),
                "child",
                e.name(),
                dir.toString())
            .redirectErrorStream(true)
            .start();
    List<String> confirmed = new ArrayList<>();
    long killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3_000);
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        if (line.startsWith("DONE ")) {
          confirmed.add(line.substring(5));
        }
        if (System.nanoTime() > killAt) {
          p.destroyForcibly();
          p.waitFor();
          break;
        }
      }
    }
    Set<String> present = new HashSet<>();
    try (Connection c = e.open(dir);
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT idem_key FROM rec WHERE state = 'COMPLETED'")) {
      while (rs.next()) {
        present.add(rs.getString(1));
      }
    }
    int lost = 0;
    for (String k : confirmed) {
      if (!present.contains(k)) {
        lost++;
      }
    }
    return new int[] {lost, confirmed.size()};
  }

  static void child(Engine e, Path dir) throws Exception {
    try (Connection c = e.open(dir);
        Statements s = new Statements(c)) {
      for (long n = 0; ; n++) {
        claimAndComplete(c, s.next, s.read, s.insert, s.complete, "k" + n);
        System.out.println("DONE k" + n);
      }
    }
  }

  private static final class Statements implements AutoCloseable {
    final PreparedStatement next;
    final PreparedStatement read;
    final PreparedStatement insert;
    final PreparedStatement complete;

    Statements(Connection c) throws SQLException {
      next = c.prepareStatement("UPDATE seq SET v = v + 1 WHERE id = 1");
      read = c.prepareStatement("SELECT v FROM seq WHERE id = 1");
      insert =
          c.prepareStatement(
              "INSERT INTO rec (scope, idem_key, state, token) VALUES ('s', ?, 'IN_PROGRESS', ?)");
      complete =
          c.prepareStatement(
              "UPDATE rec SET state = 'COMPLETED', result = ? WHERE scope = 's' AND idem_key = ? AND token = ?");
    }

    @Override
    public void close() throws SQLException {
      next.close();
      read.close();
      insert.close();
      complete.close();
    }
  }
}

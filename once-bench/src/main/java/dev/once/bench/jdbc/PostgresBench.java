package dev.once.bench.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.Admission;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.Recording;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.RecordId;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.jdbc.Purger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * PostgresStore against the bare SQL it needs, over one HikariCP pool in one run.
 *
 * <pre>
 * java -cp ... dev.once.bench.jdbc.PostgresBench overhead [seconds]     # claim+complete vs INSERT+UPDATE, 1 and 32 threads
 * java -cp ... dev.once.bench.jdbc.PostgresBench purge [rows] [seconds] # claim p99 before vs during a purge of expired rows
 * java -cp ... dev.once.bench.jdbc.PostgresBench size [rows] [seconds]  # claim p99 on a table of 10,000 vs [rows] live records
 * java -cp ... dev.once.bench.jdbc.PostgresBench replays [seconds]      # replays of one hot key vs of 10,000 keys, 32 threads
 * </pre>
 *
 * Connects to {@code jdbc:postgresql://127.0.0.1:5432/test} as {@code postgres} unless {@code
 * -Donce.bench.url=...} and {@code -Donce.bench.user=...} say otherwise; {@code
 * -Donce.bench.asyncCommit=true} runs every connection with {@code synchronous_commit=off}. Uses
 * its own tables ({@code once_bench_*}), dropped and recreated.
 */
public final class PostgresBench {

  static final String TABLE = "once_bench_pg";
  static final String BARE = "once_bench_bare";
  static final Fingerprint FP = new Fingerprint(1, "00112233445566778899aabbccddeeff");
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofHours(24);
  static final byte[] RESULT = new byte[256];

  private PostgresBench() {}

  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "overhead";
    try (HikariDataSource pool = pool(34)) {
      switch (mode) {
        case "overhead" -> overhead(pool, seconds(args, 1, 10));
        case "purge" -> purge(pool, Long.parseLong(arg(args, 1, "1000000")), seconds(args, 2, 10));
        case "size" -> size(pool, Long.parseLong(arg(args, 1, "1000000")), seconds(args, 2, 10));
        case "replays" -> replays(pool, seconds(args, 1, 10));
        default ->
            throw new IllegalArgumentException(
                "mode must be overhead, purge, size or replays; was " + mode);
      }
    }
  }

  static void overhead(HikariDataSource pool, Duration measure) throws Exception {
    try (PostgresStore store = freshStore(pool)) {
      execute(
          pool,
          "DROP TABLE IF EXISTS " + BARE,
          "CREATE TABLE " + BARE + " (LIKE " + TABLE + " INCLUDING ALL)");
      if (Boolean.getBoolean("once.bench.dropTriggers")) {
        execute(
            pool,
            "DROP TRIGGER " + TABLE + "_changed ON " + TABLE,
            "DROP TRIGGER " + TABLE + "_released ON " + TABLE);
      }
      AtomicLong bareTokens = new AtomicLong();
      Load.Op guarded = n -> claimAndComplete(store, n);
      Load.Op bare = n -> bareInsertAndUpdate(pool, n, bareTokens.incrementAndGet());
      // The engine over the same store: what an application calls, with concurrent callers'
      // claims and completions gathered into shared transactions (Once's batched store calls).
      Once once = Once.of(store);
      Load.Op engine = n -> engineClaimAndComplete(once, n);
      System.out.println("warm-up ...");
      Load.run(8, Duration.ofSeconds(3), guarded);
      Load.run(8, Duration.ofSeconds(3), bare);
      Load.run(8, Duration.ofSeconds(3), engine);
      for (int threads : new int[] {1, 32}) {
        Latencies b = Load.run(threads, measure, bare);
        Latencies g = Load.run(threads, measure, guarded);
        Latencies e = Load.run(threads, measure, engine);
        System.out.printf("threads %2d  bare INSERT+UPDATE      %s%n", threads, b);
        System.out.printf("threads %2d  store claim+complete    %s%n", threads, g);
        System.out.printf("threads %2d  engine claim+complete   %s%n", threads, e);
        ratio(threads, "store/bare", g, b);
        ratio(threads, "engine/bare", e, b);
      }
      once.close();
    }
  }

  private static void ratio(int threads, String what, Latencies side, Latencies bare) {
    System.out.printf(
        "threads %2d  ratio %s: p50 %.2f  p99 %.2f  throughput %.2f%n",
        threads,
        what,
        side.percentileMillis(50) / bare.percentileMillis(50),
        side.percentileMillis(99) / bare.percentileMillis(99),
        side.perSecond() / bare.perSecond());
  }

  static void engineClaimAndComplete(Once once, long n) {
    Admission a = once.begin(Scope.of("bench"), IdempotencyKey.of("k" + n), FP, once.defaults());
    if (!(a instanceof Admission.Proceed p) || p.lease().complete(RESULT) != Recording.RECORDED) {
      throw new IllegalStateException("unexpected " + a);
    }
  }

  static void purge(HikariDataSource pool, long rows, Duration measure) throws Exception {
    try (PostgresStore store = freshStore(pool)) {
      long t0 = System.nanoTime();
      insertRows(pool, rows, true);
      System.out.printf(
          "inserted %,d expired rows in %.1f s%n", rows, (System.nanoTime() - t0) / 1e9);
      Load.Op claim = n -> store.claim(new ClaimRequest(id(n), FP, LEASE, TTL));
      Load.run(4, Duration.ofSeconds(3), claim);
      System.out.printf("claims, 4 threads, no purge      %s%n", Load.run(4, measure, claim));
      try (Purger purger =
          Purger.builder(store).batchSize(1_000).pause(Duration.ofMillis(50)).start()) {
        System.out.printf(
            "claims, 4 threads, during Purger (batch 1000, pause 50 ms)  %s%n",
            Load.run(4, measure, claim));
      }
      AtomicBoolean purging = new AtomicBoolean(true);
      AtomicLong purged = new AtomicLong();
      Thread purger =
          new Thread(
              () -> {
                while (purging.get()) {
                  purged.addAndGet(store.purgeExpired(1_000));
                }
              });
      purger.start();
      long p0 = System.nanoTime();
      Latencies during = Load.run(4, measure, claim);
      purging.set(false);
      purger.join();
      double purgeSeconds = (System.nanoTime() - p0) / 1e9;
      System.out.printf(
          "claims, 4 threads, during an unpaused purge loop (batch 1000)  %s%n", during);
      System.out.printf(
          "unpaused purge deleted %,d rows in %.1f s = %,.0f rows/s%n",
          purged.get(), purgeSeconds, purged.get() / purgeSeconds);
    }
  }

  static void size(HikariDataSource pool, long rows, Duration measure) throws Exception {
    for (long n : new long[] {10_000, rows}) {
      try (PostgresStore store = freshStore(pool)) {
        long t0 = System.nanoTime();
        insertRows(pool, n, false);
        execute(pool, "VACUUM ANALYZE " + TABLE);
        System.out.printf("inserted %,d live rows in %.1f s%n", n, (System.nanoTime() - t0) / 1e9);
        Load.Op claim = i -> store.claim(new ClaimRequest(id(i), FP, LEASE, TTL));
        Load.run(4, Duration.ofSeconds(3), claim);
        System.out.printf("%,11d rows: claims, 4 threads  %s%n", n, Load.run(4, measure, claim));
      }
    }
  }

  /**
   * A retry of a finished request, as the store sees it: a claim that finds the outcome. All 32
   * threads on one key (a client hammering one retry) against the same load spread over 10,000
   * keys, interleaved in one run; the ratio says what the hot key costs.
   */
  static void replays(HikariDataSource pool, Duration measure) throws Exception {
    try (PostgresStore store = freshStore(pool)) {
      int spread = 10_000;
      for (long n = 0; n <= spread; n++) {
        claimAndComplete(store, n);
      }
      Load.Op hot = n -> replay(store, 0);
      Load.Op spreadOut = n -> replay(store, 1 + n % spread);
      System.out.println("warm-up ...");
      Load.run(32, Duration.ofSeconds(3), hot);
      Load.run(32, Duration.ofSeconds(3), spreadOut);
      for (int round = 1; round <= 2; round++) {
        Latencies s = Load.run(32, measure, spreadOut);
        Latencies h = Load.run(32, measure, hot);
        System.out.printf("round %d  replays over %,d keys  %s%n", round, spread, s);
        System.out.printf("round %d  replays of one key      %s%n", round, h);
        System.out.printf(
            "round %d  ratio hot/spread: throughput %.2f  p99 %.2f%n",
            round, h.perSecond() / s.perSecond(), h.percentileMillis(99) / s.percentileMillis(99));
      }
    }
  }

  static void replay(PostgresStore store, long n) {
    if (!(store.claim(new ClaimRequest(id(n), FP, LEASE, TTL)) instanceof ClaimResult.Existing)) {
      throw new IllegalStateException("a replay claimed key " + n);
    }
  }

  static void claimAndComplete(PostgresStore store, long n) {
    RecordId id = id(n);
    ClaimResult r = store.claim(new ClaimRequest(id, FP, LEASE, TTL));
    if (!(r instanceof ClaimResult.Claimed c) || !store.complete(id, c.token(), RESULT, TTL)) {
      throw new IllegalStateException("unexpected " + r);
    }
  }

  /** The same row written with the two plain statements a hand-rolled check would use. */
  static void bareInsertAndUpdate(HikariDataSource pool, long n, long token) throws SQLException {
    try (Connection c = pool.getConnection()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO "
                  + BARE
                  + " (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at, created_at)"
                  + " VALUES (?, ?, 'IN_PROGRESS', ?, ?, 1, now() + interval '30 seconds', now() + interval '1 day', now())")) {
        ps.setString(1, "bench");
        ps.setString(2, "k" + n);
        ps.setString(3, FP.encoded());
        ps.setLong(4, token);
        ps.executeUpdate();
      }
    }
    try (Connection c = pool.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE "
                    + BARE
                    + " SET state = 'COMPLETED', result = ?, expires_at = now() + interval '1 day' WHERE scope = ? AND idem_key = ?")) {
      ps.setBytes(1, RESULT);
      ps.setString(2, "bench");
      ps.setString(3, "k" + n);
      ps.executeUpdate();
    }
  }

  static RecordId id(long n) {
    return RecordId.of(Scope.of("bench"), IdempotencyKey.of("k" + n));
  }

  /** Bulk rows in scope 'filler', so they never collide with the load's keys. */
  static void insertRows(HikariDataSource pool, long rows, boolean expired) {
    String expiry =
        expired ? "clock_timestamp() - interval '1 hour'" : "clock_timestamp() + interval '1 day'";
    execute(
        pool,
        "INSERT INTO "
            + TABLE
            + " (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at, result, created_at)"
            + " SELECT 'filler', 'f' || g, 'COMPLETED', '"
            + FP.encoded()
            + "', nextval('"
            + TABLE
            + "_seq'), 1,"
            + " clock_timestamp(), "
            + expiry
            + " + (g % 1000) * interval '1 millisecond', '\\x00'::bytea, clock_timestamp()"
            + " FROM generate_series(1, "
            + rows
            + ") g");
  }

  public static PostgresStore freshStore(HikariDataSource pool) {
    execute(pool, "DROP TABLE IF EXISTS " + TABLE, "DROP SEQUENCE IF EXISTS " + TABLE + "_seq");
    return PostgresStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build();
  }

  static void execute(HikariDataSource pool, String... sql) {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.setQueryTimeout(0);
      for (String each : sql) {
        s.execute(each);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  public static HikariDataSource pool(int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(
        System.getProperty("once.bench.url", "jdbc:postgresql://127.0.0.1:5432/test"));
    config.setUsername(System.getProperty("once.bench.user", "postgres"));
    config.setMaximumPoolSize(size);
    config.setPoolName("bench");
    if (Boolean.getBoolean("once.bench.asyncCommit")) {
      // Takes the WAL flush out of every commit, leaving the statements' own cost to compare.
      config.setConnectionInitSql("SET synchronous_commit = off");
    }
    return new HikariDataSource(config);
  }

  private static Duration seconds(String[] args, int index, int dflt) {
    return Duration.ofSeconds(Long.parseLong(arg(args, index, String.valueOf(dflt))));
  }

  private static String arg(String[] args, int index, String dflt) {
    return args.length > index ? args[index] : dflt;
  }
}

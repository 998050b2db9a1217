package dev.once.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.ExecutionPolicy;
import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.InFlightPolicy;
import dev.once.Once;
import dev.once.Recording;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.fingerprint.Fingerprinter;
import dev.once.internal.Arguments;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.jdbc.TransactionalStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Store failover under load: N threads run {@link Once#execute} over a {@link PostgresStore} on a
 * primary, each operation with a new key and one effect (a row in {@code chaos_effects}, written in
 * its own transaction or in the record's, see {@link EffectMode}); mid-load the primary's host
 * "crashes" (SIGKILL of the postmaster and its processes) and the replica is promoted. The promoted
 * replica is then audited against what the store had acknowledged, and every key is retried there
 * once more, so that a lost completion shows up as what users fear: the operation running again.
 *
 * <pre>
 * java -cp once-chaos.jar dev.once.chaos.FailoverHarness [--replication async|sync-remote-apply|all]
 *     [--effects separate|transactional|all] [--threads 16] [--seconds 10] [--rounds 1]
 * </pre>
 *
 * <p>Exits 1 if synchronous replication lost or re-ran anything acknowledged (asynchronous
 * replication is allowed to: that is what the run shows).
 */
public final class FailoverHarness {

  private static final Logger log = LoggerFactory.getLogger(FailoverHarness.class);
  private static final Scope SCOPE = Scope.of("chaos", "failover");
  private static final Duration LEASE = Duration.ofSeconds(3);

  private final Replication replication;
  private final EffectMode effects;
  private final int threads;
  private final Duration load;

  /**
   * @param replication how the primary replicates
   * @param effects where operations write their effect
   * @param threads concurrent callers, 1–64
   * @param load how long the load runs before the primary is killed, 1 s – 1 h
   */
  public FailoverHarness(Replication replication, EffectMode effects, int threads, Duration load) {
    Arguments.present("replication", replication);
    Arguments.present("effects", effects);
    if (threads < 1 || threads > 64) {
      throw new IllegalArgumentException("threads must be between 1 and 64, was " + threads);
    }
    if (load == null
        || load.compareTo(Duration.ofSeconds(1)) < 0
        || load.compareTo(Duration.ofHours(1)) > 0) {
      throw new IllegalArgumentException("load must be between 1 s and 1 h, was " + load);
    }
    this.replication = replication;
    this.effects = effects;
    this.threads = threads;
    this.load = load;
  }

  /** One round on a fresh cluster: load, crash, promote, audit, final retry. */
  public FailoverReport run() throws InterruptedException, SQLException {
    try (PostgresCluster cluster = PostgresCluster.withReplica(replication)) {
      Set<String> attempted = ConcurrentHashMap.newKeySet();
      Set<String> acknowledged = ConcurrentHashMap.newKeySet();
      try (HikariDataSource primary =
          pool(cluster.primaryJdbcUrl(), cluster.user(), threads + 2, "primary")) {
        try (PostgresStore store =
            PostgresStore.builder(primary).autoCreateSchema(true).notifications(false).build()) {
          createEffectsTable(primary);
          runLoadThenCrash(cluster, store, primary, attempted, acknowledged);
        }
      }
      log.info("{}/{}: promoting the replica", replication, effects);
      cluster.promoteReplica();
      try (HikariDataSource promoted =
          pool(cluster.replicaJdbcUrl(), cluster.user(), 8, "promoted")) {
        return audit(promoted, attempted, acknowledged);
      }
    }
  }

  private void runLoadThenCrash(
      PostgresCluster cluster,
      PostgresStore store,
      DataSource db,
      Set<String> attempted,
      Set<String> acknowledged)
      throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (Worker once = new Worker(store, db)) {
      for (int t = 0; t < threads; t++) {
        int thread = t;
        pool.execute(
            () -> {
              // Bounded: stops when told, and never runs more than a million operations per thread.
              for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
                String key = "t" + thread + "-" + i;
                attempted.add(key);
                try {
                  if (once.execute(key) instanceof ExecutionResult.Executed<String> e
                      && e.recording() == Recording.RECORDED) {
                    acknowledged.add(key);
                  }
                } catch (RuntimeException e) {
                  // The effect failed (the primary is gone): the key was released or is left in
                  // progress.
                  Commands.sleep(Duration.ofMillis(50));
                }
              }
            });
      }
      Commands.sleep(load);
      log.info(
          "{}: SIGKILL of the primary after {} acknowledged operations",
          replication,
          acknowledged.size());
      cluster.killPrimary();
      // Let the callers see the failure, then stop them.
      Commands.sleep(Duration.ofSeconds(2));
      stop.set(true);
      pool.shutdown();
      if (!pool.awaitTermination(2, TimeUnit.MINUTES)) {
        pool.shutdownNow();
        throw new IllegalStateException("load threads did not stop within 2 minutes");
      }
    }
  }

  private FailoverReport audit(DataSource promoted, Set<String> attempted, Set<String> acknowledged)
      throws SQLException, InterruptedException {
    Map<String, String> states = new HashMap<>();
    try (Connection c = promoted.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT idem_key, state FROM once_records")) {
      while (rs.next()) {
        states.put(rs.getString(1), rs.getString(2));
      }
    }
    Map<String, Integer> effectsBefore = effects(promoted);
    int lostCompletions = 0;
    int lostEffects = 0;
    for (String key : acknowledged) {
      if (!"COMPLETED".equals(states.get(key))) {
        lostCompletions++;
      }
      if (effectsBefore.getOrDefault(key, 0) == 0) {
        lostEffects++;
      }
    }
    int inProgress = (int) states.values().stream().filter("IN_PROGRESS"::equals).count();

    // The final retry, as clients would send it after the failover: every key, same request.
    int rerun = 0;
    int unsettled = 0;
    try (PostgresStore store = PostgresStore.builder(promoted).notifications(false).build();
        Worker once = new Worker(store, promoted)) {
      for (String key : sorted(attempted)) {
        ExecutionResult<String> r = settle(once, key);
        if (r instanceof ExecutionResult.Executed<String> && acknowledged.contains(key)) {
          rerun++;
        } else if (!(r instanceof ExecutionResult.Executed<String>)
            && !(r instanceof ExecutionResult.Replayed<String>)) {
          unsettled++;
        }
      }
    }
    int duplicateAcknowledged = 0;
    int duplicateInFlight = 0;
    for (Map.Entry<String, Integer> e : effects(promoted).entrySet()) {
      if (e.getValue() > 1 && acknowledged.contains(e.getKey())) {
        duplicateAcknowledged++;
      } else if (e.getValue() > 1) {
        duplicateInFlight++;
      }
    }
    FailoverReport report =
        new FailoverReport(
            replication,
            effects,
            attempted.size(),
            acknowledged.size(),
            lostCompletions,
            lostEffects,
            inProgress,
            rerun,
            duplicateAcknowledged,
            duplicateInFlight,
            unsettled,
            load);
    log.info("{}", report);
    return report;
  }

  /**
   * Retries until the key is replayed or executed, waiting out a lease left by the dead primary;
   * null if every try threw.
   */
  private static @Nullable ExecutionResult<String> settle(Worker once, String key)
      throws InterruptedException {
    ExecutionResult<String> r = null;
    for (int attempt = 0; attempt < 10; attempt++) {
      try {
        r = once.execute(key);
      } catch (RuntimeException e) {
        Thread.sleep(500);
        continue;
      }
      if (!(r instanceof ExecutionResult.InFlight<String>)
          && !(r instanceof ExecutionResult.StoreUnavailable<String>)) {
        return r;
      }
    }
    return r;
  }

  /** Runs operations with their effect where {@link #effects} says, over one store. */
  private final class Worker implements AutoCloseable {
    private final DataSource db;
    private final TransactionalStore transactional;
    private final Once once;
    private final ScheduledExecutorService heartbeats =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "failover-heartbeats");
              t.setDaemon(true);
              return t;
            });

    Worker(PostgresStore store, DataSource db) {
      this.db = db;
      this.transactional = store.transactional();
      this.once = Once.builder(store).defaults(policy()).heartbeatScheduler(heartbeats).build();
    }

    ExecutionResult<String> execute(String key) {
      return effects == EffectMode.SEPARATE ? separate(key) : inOneTransaction(key);
    }

    private ExecutionResult<String> separate(String key) {
      return once.execute(
          SCOPE,
          IdempotencyKey.of(key),
          fingerprint(key),
          ResultCodec.utf8(),
          ctx -> {
            try (Connection c = db.getConnection()) {
              insertEffect(c, key);
            }
            return "done " + key;
          });
    }

    /** Claim, effect and completion in one transaction; acknowledged only once it committed. */
    private ExecutionResult<String> inOneTransaction(String key) {
      try (Connection c = db.getConnection()) {
        c.setAutoCommit(false);
        try (Once tx =
            Once.builder(transactional.on(c))
                .defaults(policy().toBuilder().heartbeat(false).build())
                .heartbeatScheduler(heartbeats)
                .build()) {
          ExecutionResult<String> r =
              tx.execute(
                  SCOPE,
                  IdempotencyKey.of(key),
                  fingerprint(key),
                  ResultCodec.utf8(),
                  ctx -> {
                    insertEffect(c, key);
                    return "done " + key;
                  });
          c.commit();
          return r;
        } catch (RuntimeException | SQLException e) {
          c.rollback();
          throw e;
        }
      } catch (SQLException e) {
        throw new IllegalStateException("transaction failed", e);
      }
    }

    @Override
    public void close() {
      once.close();
      heartbeats.shutdownNow();
    }
  }

  private static void insertEffect(Connection c, String key) throws SQLException {
    try (PreparedStatement insert =
        c.prepareStatement("INSERT INTO chaos_effects (idem_key) VALUES (?)")) {
      insert.setString(1, key);
      insert.executeUpdate();
    }
  }

  private static ExecutionPolicy policy() {
    // Waiting longer than the lease lets the final retry take over keys the dead primary left in
    // progress.
    return ExecutionPolicy.builder()
        .lease(LEASE)
        .inFlight(InFlightPolicy.waitUpTo(LEASE.multipliedBy(3)))
        .build();
  }

  private static Fingerprint fingerprint(String key) {
    return Fingerprinter.defaults().raw(key.getBytes(StandardCharsets.UTF_8));
  }

  private static void createEffectsTable(DataSource db) {
    try (Connection c = db.getConnection();
        Statement s = c.createStatement()) {
      // No unique constraint on purpose: a second execution must show as a second row.
      s.execute(
          "CREATE TABLE IF NOT EXISTS chaos_effects (id bigserial PRIMARY KEY, idem_key text NOT NULL)");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create chaos_effects", e);
    }
  }

  private static Map<String, Integer> effects(DataSource db) throws SQLException {
    Map<String, Integer> counts = new HashMap<>();
    try (Connection c = db.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT idem_key, count(*) FROM chaos_effects GROUP BY idem_key")) {
      while (rs.next()) {
        counts.put(rs.getString(1), rs.getInt(2));
      }
    }
    return counts;
  }

  private static List<String> sorted(Set<String> keys) {
    List<String> list = new ArrayList<>(keys);
    list.sort(null);
    return list;
  }

  static HikariDataSource pool(String jdbcUrl, String user, int size, String name) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setUsername(user);
    config.setMaximumPoolSize(size);
    config.setConnectionTimeout(3_000);
    config.setPoolName("chaos-" + name);
    config.setInitializationFailTimeout(-1);
    return new HikariDataSource(config);
  }

  /** The command line: one table row per round and replication mode. */
  public static void main(String[] args) throws Exception {
    Options options =
        Options.parse(
            args,
            Map.of(
                "replication",
                "all",
                "effects",
                "all",
                "threads",
                "16",
                "seconds",
                "10",
                "rounds",
                "1"));
    List<Replication> modes = options.enumValues("replication", Replication.class);
    List<EffectMode> effectModes = options.enumValues("effects", EffectMode.class);
    int rounds = options.intValue("rounds", 1, 100);
    List<FailoverReport> reports = new ArrayList<>();
    for (Replication mode : modes) {
      for (EffectMode effectMode : effectModes) {
        FailoverHarness harness =
            new FailoverHarness(
                mode,
                effectMode,
                options.intValue("threads", 1, 64),
                Duration.ofSeconds(options.intValue("seconds", 1, 3600)));
        for (int round = 0; round < rounds; round++) {
          reports.add(harness.run());
          System.out.println(FailoverReport.header());
          reports.forEach(r -> System.out.println(r.row()));
        }
      }
    }
    boolean syncLost =
        reports.stream()
            .anyMatch(
                r -> r.replication() == Replication.SYNC_REMOTE_APPLY && !r.acknowledgedSafe());
    System.exit(syncLost ? 1 : 0);
  }
}

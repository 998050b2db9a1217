package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.sql.ResultSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PostgresStoreTest extends JdbcStoreBehaviour {

  static final String TABLE = Tables.unique("once_test_pg");
  static HikariDataSource pool;

  @BeforeAll
  static void createTable() {
    pool = Services.postgresPool(16);
    Tables.execute(pool, "DROP TABLE IF EXISTS " + TABLE);
  }

  @AfterAll
  static void closePool() {
    if (pool != null) {
      Tables.execute(pool, TestDatabase.POSTGRESQL.drop(TABLE));
    }
    Tables.close(pool);
  }

  @Override
  IdempotencyStore openStoreOnEmptyTable() {
    PostgresStore s = PostgresStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build();
    Tables.execute(pool, "DELETE FROM " + TABLE);
    return s;
  }

  /**
   * A consumer's batch: its new records are claimed by one statement, and its completions and
   * releases are one statement each, however many; a record that exists is claimed by the single
   * statement in the same transaction, and answered as a single claim would; a batch of one is the
   * single claim alone.
   */
  @Test
  void aBatchOfNewRecordsIsClaimedAndFinishedInOneStatementEach() {
    RecordId done = newId();
    ClaimResult.Claimed first = claim(done, LEASE);
    assertThat(store.complete(done, first.token(), new byte[] {1}, LEASE)).isTrue();
    java.util.List<dev.once.store.ClaimRequest> requests = new java.util.ArrayList<>();
    for (int i = 0; i < 500; i++) {
      requests.add(request(newId(), LEASE));
    }
    requests.add(250, request(done, LEASE));
    CountingConnections counting = CountingConnections.around((JdbcStore) store);
    // The batch calls themselves, as the PostgreSQL store makes them (ServerStore delegates here).
    IdempotencyStore counted = counting.store((JdbcStore) store).operations;

    java.util.List<ClaimResult> claims = counted.claimAll(requests);

    assertThat(counting.opened).as("operations").hasValue(1);
    assertThat(counting.prepared.get())
        .as("statements: the new ones, then the replay")
        .isEqualTo(2);
    assertThat(claims.get(250)).isInstanceOf(ClaimResult.Existing.class);
    java.util.List<dev.once.store.Finish> finishes = new java.util.ArrayList<>();
    for (int i = 0; i < claims.size(); i++) {
      if (claims.get(i) instanceof ClaimResult.Claimed c) {
        RecordId id = requests.get(i).id();
        assertThat(store.get(id)).get().satisfies(r -> assertThat(r.token()).isEqualTo(c.token()));
        finishes.add(
            i % 3 == 0
                ? dev.once.store.Finish.release(id, c.token())
                : dev.once.store.Finish.complete(id, c.token(), new byte[] {2}, LEASE));
      }
    }
    finishes.add(dev.once.store.Finish.complete(done, first.token(), new byte[] {3}, LEASE));
    counting.executed.set(0);

    java.util.List<Boolean> applied = counted.finishAll(finishes);

    assertThat(counting.executed.get()).as("statements: completions, releases").isEqualTo(2);
    assertThat(applied.subList(0, 500)).containsOnly(true);
    assertThat(applied.get(500)).as("a finished record is not finished again").isFalse();
    assertThat(store.get(requests.get(0).id())).isEmpty(); // released
    counting.executed.set(0);
    assertThat(counted.claimAll(List.of(request(done, LEASE))).get(0))
        .isInstanceOf(ClaimResult.Existing.class);
    assertThat(counting.executed.get())
        .as("statements: a lone replay, the single claim")
        .isEqualTo(1);
    assertThat(store.get(requests.get(1).id()))
        .get()
        .satisfies(r -> assertThat(r.result()).containsExactly(2));
  }

  @Test
  void theInFlightListingReadsPastAtMostItsBudgetOfExpiredRowsAndSaysWhenItStopped() {
    RecordId live = newId();
    claim(live, LEASE);
    // Abandoned work never purged: in progress, expired, and older than the live record.
    Tables.execute(
        pool,
        "INSERT INTO "
            + TABLE
            + " (scope, idem_key, state, fingerprint, token, attempt, lease_until, expires_at,"
            + " created_at) SELECT 'abandoned', 'k' || g, 'IN_PROGRESS', 'v1:00', g, 1,"
            + " now() - interval '2 hours', now() - interval '1 hour', now() - interval '3 hours'"
            + " FROM generate_series(1, "
            + (JdbcOperations.IN_FLIGHT_EXPIRED_BUDGET + 1)
            + ") g");

    dev.once.store.InFlight stopped = store.inFlight(java.time.Duration.ZERO, 1);

    assertThat(stopped.records()).isEmpty();
    assertThat(stopped.complete()).isFalse();
    while (store.purgeExpired(500) == 500) {
      // bounded: 1,001 rows, two rounds and a short third
    }
    dev.once.store.InFlight found = store.inFlight(java.time.Duration.ZERO, 1);
    assertThat(found.records()).extracting(r -> r.id()).containsExactly(live);
    assertThat(found.complete()).isTrue();
  }

  @Test
  void theInFlightListingIsARangeOfThePartialIndexNotAFilterOverIt() throws Exception {
    String sql =
        new Statements(new PostgresDialect(dev.once.store.jdbc.support.TableName.parse(TABLE)))
            .inFlight;
    StringBuilder plan = new StringBuilder();
    try (java.sql.Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try (java.sql.Statement s = c.createStatement()) {
        s.execute("SET LOCAL enable_seqscan = off"); // a tiny table would be scanned otherwise
      }
      try (java.sql.PreparedStatement ps = c.prepareStatement("EXPLAIN " + sql)) {
        ps.setLong(1, -30_000_000L);
        ps.setLong(2, 1_100L);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            plan.append(rs.getString(1)).append('\n');
          }
        }
      } finally {
        c.rollback();
      }
    }

    assertThat(plan.toString())
        .contains(TABLE + "_in_flight_idx")
        .containsPattern("Index Cond: \\(created_at <=");
  }

  @Test
  void aSchemaCreatedByTheFirstVersionGainsTheInFlightIndexAndCreatingItAgainIsHarmless()
      throws Exception {
    String table = Tables.unique("once_test_pg_v1");
    Tables.execute(pool, TestDatabase.POSTGRESQL.drop(table));
    try {
      try (java.sql.Connection c = pool.getConnection()) {
        dev.once.store.jdbc.support.Migrations.apply(
            c,
            "db/once/postgresql/V1__once_records.sql",
            "once_records",
            dev.once.store.jdbc.support.TableName.parse(table),
            null,
            5);
      }
      String indexes =
          "SELECT count(*) FROM pg_indexes WHERE tablename = '"
              + table
              + "' AND indexname = '"
              + table
              + "_in_flight_idx'";
      assertThat(Tables.count(pool, indexes)).isZero();

      PostgresStore.builder(pool).tableName(table).autoCreateSchema(true).build().close();
      PostgresStore.builder(pool).tableName(table).autoCreateSchema(true).build().close();

      assertThat(Tables.count(pool, indexes)).isEqualTo(1);
    } finally {
      Tables.execute(pool, TestDatabase.POSTGRESQL.drop(table));
    }
  }

  @Test
  void notifiesChangesThroughListenNotify() {
    assertThat(store.notifiesChanges()).isTrue();
  }

  @Test
  void aReplayIsAReadThatNoLockOnTheKeyHoldsUp() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    store.complete(id, c.token(), new byte[] {1}, TTL);
    try (java.sql.Connection other = pool.getConnection()) {
      other.setAutoCommit(false);
      try (java.sql.PreparedStatement lock =
          other.prepareStatement(
              "SELECT 1 FROM " + TABLE + " WHERE scope = ? AND idem_key = ? FOR UPDATE")) {
        Rows.bindId(lock, 1, id);
        lock.executeQuery().close(); // another transaction now holds the row's lock
      }
      CompletableFuture<ClaimResult> replay =
          CompletableFuture.supplyAsync(
              () -> store.claim(new dev.once.store.ClaimRequest(id, FP, LEASE, TTL)));
      try {
        assertThat(replay.get(5, TimeUnit.SECONDS)).isInstanceOf(ClaimResult.Existing.class);
      } finally {
        other.rollback();
      }
    }
  }

  @Test
  void aWaiterIsWokenWhenTheRecordCompletes() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    CompletableFuture<Void> completion = store.awaitChange(id);
    Thread.sleep(200);
    assertThat(completion).isNotDone();
    store.complete(id, c.token(), new byte[] {1}, TTL);
    completion.get(10, TimeUnit.SECONDS);
  }

  @Test
  void onlyTransitionsSomeoneWaitsForNotify() throws Exception {
    try (java.sql.Connection listener = pool.getConnection();
        java.sql.Statement s = listener.createStatement()) {
      s.execute("LISTEN " + PostgresChangeFeed.CHANNEL);
      org.postgresql.PGConnection pg = listener.unwrap(org.postgresql.PGConnection.class);
      RecordId unwatched = newId();
      ClaimResult.Claimed a = claim(unwatched, LEASE);
      store.complete(unwatched, a.token(), new byte[] {1}, TTL);
      // Other builds on this server may notify on the same channel: look only at this table's.
      assertThat(notificationsOfThisTable(pg, 500)).as("a completion nobody waits for").isEmpty();

      RecordId watched = newId();
      ClaimResult.Claimed b = claim(watched, LEASE);
      store.awaitChange(watched);
      store.complete(watched, b.token(), new byte[] {1}, TTL);
      assertThat(notificationsOfThisTable(pg, 5_000))
          .containsExactly(TABLE + "\n" + watched.scope() + "\n" + watched.key());
    }
  }

  /** This table's notifications: the first that arrive within the time, ignoring other tables'. */
  private static java.util.List<String> notificationsOfThisTable(
      org.postgresql.PGConnection pg, int millis) throws java.sql.SQLException {
    java.util.List<String> mine = new java.util.ArrayList<>();
    long deadline = System.currentTimeMillis() + millis;
    long left;
    while (mine.isEmpty() && (left = deadline - System.currentTimeMillis()) > 0) {
      org.postgresql.PGNotification[] batch = pg.getNotifications((int) left);
      for (org.postgresql.PGNotification n :
          batch == null ? new org.postgresql.PGNotification[0] : batch) {
        if (n.getParameter().startsWith(TABLE + "\n")) {
          mine.add(n.getParameter());
        }
      }
    }
    return mine;
  }

  @Test
  void aWaiterIsWokenWhenTheKeyIsReleasedAndNotByOtherKeys() throws Exception {
    RecordId id = newId();
    RecordId other = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    ClaimResult.Claimed o = claim(other, LEASE);
    CompletableFuture<Void> release = store.awaitChange(id);
    store.release(other, o.token());
    Thread.sleep(300);
    assertThat(release).isNotDone();
    store.release(id, c.token());
    release.get(10, TimeUnit.SECONDS);
  }
}

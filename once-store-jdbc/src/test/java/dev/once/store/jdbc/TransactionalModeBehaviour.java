package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.tck.ChildJvm;
import dev.once.tck.Eventually;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Transactional mode on a real database: the claim, a business row and the completion commit
 * together in the caller's transaction; a duplicate waits for that transaction and then replays, or
 * claims afresh after a rollback; and a process killed mid-transaction leaves nothing behind.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class TransactionalModeBehaviour {

  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofHours(1);

  private final TestDatabase database;
  private final String table;
  private final String businessTable;
  private HikariDataSource pool;
  private JdbcStore store;

  TransactionalModeBehaviour(TestDatabase database) {
    this.database = database;
    this.table = Tables.unique("once_tx_" + database.name().toLowerCase(java.util.Locale.ROOT));
    this.businessTable = table + "_payments";
  }

  @BeforeAll
  void createTables() {
    pool = database.pool(8);
    Tables.execute(
        pool,
        "DROP TABLE IF EXISTS " + businessTable,
        "CREATE TABLE "
            + businessTable
            + " (idem_key varchar(255) PRIMARY KEY, amount int NOT NULL)");
    store = database.openOnFreshTable(pool, table);
  }

  @AfterAll
  void closeAll() {
    if (store != null) {
      store.close();
    }
    if (pool != null) {
      Tables.execute(pool, database.drop(table));
      Tables.execute(pool, "DROP TABLE IF EXISTS " + businessTable);
    }
    Tables.close(pool);
  }

  DataSource pool() {
    return pool;
  }

  JdbcStore store() {
    return store;
  }

  TransactionalStore transactional() {
    return database.transactional(store);
  }

  String businessTable() {
    return businessTable;
  }

  static RecordId newId() {
    return RecordId.of(
        Scope.of("tx", UUID.randomUUID().toString()),
        IdempotencyKey.of("pay-" + UUID.randomUUID()));
  }

  static ClaimRequest request(RecordId id) {
    return new ClaimRequest(id, JdbcStoreBehaviour.FP, LEASE, TTL);
  }

  static void insertBusinessRow(Connection c, String table, RecordId id) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("INSERT INTO " + table + " (idem_key, amount) VALUES (?, 100)")) {
      ps.setString(1, id.key().value());
      ps.executeUpdate();
    }
  }

  long businessRows(RecordId id) {
    return Tables.count(
        pool(),
        "SELECT count(*) FROM " + businessTable() + " WHERE idem_key = '" + id.key().value() + "'");
  }

  /**
   * Claims, writes the business row and completes, all in one transaction on {@code c}; returns the
   * claim.
   */
  ClaimResult runOnce(Connection c, RecordId id) throws SQLException {
    IdempotencyStore store = transactional().on(c);
    ClaimResult result = store.claim(request(id));
    if (result instanceof ClaimResult.Claimed claimed) {
      insertBusinessRow(c, businessTable(), id);
      assertThat(store.complete(id, claimed.token(), new byte[] {'o', 'k'}, TTL)).isTrue();
    }
    return result;
  }

  @Test
  void aViewRefusesAConnectionInAutoCommitMode() throws Exception {
    try (Connection c = pool().getConnection()) {
      c.setAutoCommit(true);
      assertThatThrownBy(() -> transactional().on(c))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("auto-commit");
    }
  }

  @Test
  void claimWritesAndCompletionCommitTogether() throws Exception {
    RecordId id = newId();
    try (Connection c = pool().getConnection()) {
      c.setAutoCommit(false);
      assertThat(runOnce(c, id)).isInstanceOf(ClaimResult.Claimed.class);
      assertThat(store().get(id)).as("invisible before commit").isEmpty();
      c.commit();
    }
    assertThat(store().get(id)).get().extracting(r -> r.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(businessRows(id)).isEqualTo(1);
  }

  @Test
  void aBatchedHeartbeatRunsInTheCallersTransactionInOneOrTwoStatements() throws Exception {
    CountingConnections counting = new CountingConnections(null);
    List<LeaseToken> held = new ArrayList<>();
    try (Connection c = pool().getConnection()) {
      c.setAutoCommit(false);
      IdempotencyStore view = transactional().on(counting.counting(c));
      for (int i = 0; i < 100; i++) {
        RecordId id = newId();
        held.add(new LeaseToken(id, ((ClaimResult.Claimed) view.claim(request(id))).token()));
      }
      int before = counting.prepared.get();

      assertThat(view.heartbeat(held, Duration.ofMinutes(10)))
          .containsExactlyInAnyOrderElementsOf(held);

      assertThat(counting.prepared.get() - before).as("statements").isBetween(1, 2);
      c.commit();
    }
    assertThat(store().get(held.get(0).id()))
        .get()
        .satisfies(r -> assertThat(r.leaseRemaining()).isGreaterThan(Duration.ofMinutes(9)));
  }

  /**
   * A claim that has to wait for another transaction's claim of the same key takes its token only
   * once it goes ahead: a claim and a release committed while it waited were granted before it, so
   * their tokens are smaller. (Drawing the token before the wait broke this: the waiting claim then
   * inserted a token older than one already granted and released.)
   */
  @Test
  void aClaimThatWaitedForAnotherTransactionGetsALargerTokenThanEveryLeaseGrantedMeanwhile()
      throws Exception {
    RecordId id = newId();
    ExecutorService waiter = Executors.newSingleThreadExecutor();
    try (Connection c = pool().getConnection()) {
      c.setAutoCommit(false);
      IdempotencyStore holder = transactional().on(c);
      long first = ((ClaimResult.Claimed) holder.claim(request(id))).token();
      Future<ClaimResult> waiting = waiter.submit(() -> store().claim(request(id)));
      awaitALockWait();

      assertThat(holder.release(id, first)).isTrue();
      long second = ((ClaimResult.Claimed) holder.claim(request(id))).token();
      assertThat(holder.release(id, second)).isTrue();
      c.commit();

      assertThat(waiting.get(10, TimeUnit.SECONDS))
          .isInstanceOfSatisfying(
              ClaimResult.Claimed.class,
              late ->
                  assertThat(late.token())
                      .as("the token granted after %d", second)
                      .isGreaterThan(second));
    } finally {
      waiter.shutdownNow();
    }
  }

  /**
   * Returns once a statement on this table waits for a lock; bounded, so a claim that never blocks
   * fails.
   */
  private void awaitALockWait() {
    Eventually.assertThat(
        "a claim waiting for the lock",
        Duration.ofSeconds(10),
        () -> Tables.count(pool(), database.lockWaitsOn(table)) > 0);
  }

  @Test
  void aRollbackLeavesNeitherRecordNorBusinessRow() throws Exception {
    RecordId id = newId();
    try (Connection c = pool().getConnection()) {
      c.setAutoCommit(false);
      runOnce(c, id);
      c.rollback();
    }
    assertThat(store().get(id)).isEmpty();
    assertThat(businessRows(id)).isZero();
  }

  @Test
  void aDuplicateWaitsForTheFirstTransactionAndReplaysItsCommittedResult() throws Exception {
    RecordId id = newId();
    ClaimResult second = duplicateWhileFirstIsOpen(id, true);
    assertThat(second)
        .isInstanceOfSatisfying(
            ClaimResult.Existing.class,
            e -> {
              assertThat(e.record().state()).isEqualTo(RecordState.COMPLETED);
              assertThat(e.record().result()).containsExactly('o', 'k');
            });
    assertThat(businessRows(id)).isEqualTo(1);
  }

  @Test
  void aDuplicateClaimsAfreshWhenTheFirstTransactionRollsBack() throws Exception {
    RecordId id = newId();
    ClaimResult second = duplicateWhileFirstIsOpen(id, false);
    assertThat(second).isInstanceOf(ClaimResult.Claimed.class);
    assertThat(businessRows(id)).isEqualTo(1);
  }

  /**
   * The first transaction claims, writes and completes, then holds its commit (or rollback) while a
   * duplicate claims in a second transaction: the duplicate must block until the first ends.
   */
  private ClaimResult duplicateWhileFirstIsOpen(RecordId id, boolean commitFirst) throws Exception {
    CountDownLatch firstDone = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Void> first =
        CompletableFuture.runAsync(
            () -> {
              try (Connection c = pool().getConnection()) {
                c.setAutoCommit(false);
                assertThat(runOnce(c, id)).isInstanceOf(ClaimResult.Claimed.class);
                firstDone.countDown();
                release.await();
                if (commitFirst) {
                  c.commit();
                } else {
                  c.rollback();
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    assertThat(firstDone.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<ClaimResult> second =
        CompletableFuture.supplyAsync(
            () -> {
              try (Connection c = pool().getConnection()) {
                c.setAutoCommit(false);
                ClaimResult r = runOnce(c, id);
                c.commit();
                return r;
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    awaitALockWait();
    assertThat(second).as("the duplicate waits on the unique index").isNotDone();
    release.countDown();
    first.get(10, TimeUnit.SECONDS);
    return second.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aProcessKilledMidTransactionLeavesNothingAndTheRetryRunsOnce() throws Exception {
    RecordId id = newId();
    try (ChildJvm child =
        ChildJvm.start(
            CrashChild.class, database.name(), table, id.scope().value(), id.key().value())) {
      child.awaitLine("READY", 60);
      child.kill();
    }
    // The server rolls back once it sees the connection drop; give it a moment to notice.
    Eventually.assertThat(
        "the killed transaction rolled back", Duration.ofSeconds(10), () -> businessRows(id) == 0);
    assertThat(store().get(id)).isEmpty();
    assertThat(businessRows(id)).isZero();

    try (Connection c = pool().getConnection()) {
      c.setAutoCommit(false);
      assertThat(runOnce(c, id)).isInstanceOf(ClaimResult.Claimed.class);
      c.commit();
    }
    assertThat(businessRows(id)).isEqualTo(1);
    assertThat(store().get(id)).get().extracting(r -> r.state()).isEqualTo(RecordState.COMPLETED);
  }

  /**
   * A child JVM that claims and writes a business row in an open transaction, then waits to be
   * killed.
   */
  public static final class CrashChild {
    public static void main(String[] args) throws Exception {
      TestDatabase database = TestDatabase.valueOf(args[0]);
      String table = args[1];
      RecordId id = RecordId.of(new Scope(args[2]), IdempotencyKey.of(args[3]));
      HikariDataSource pool = database.pool(2);
      JdbcStore store = database.open(pool, table, false);
      Connection c = pool.getConnection();
      c.setAutoCommit(false);
      database.transactional(store).on(c).claim(request(id));
      insertBusinessRow(c, table + "_payments", id);
      System.out.println("READY");
      Thread.sleep(Long.MAX_VALUE);
    }
  }
}

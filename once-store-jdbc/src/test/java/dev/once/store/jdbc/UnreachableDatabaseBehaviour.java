package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.ClaimResult;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import dev.once.tck.Eventually;
import dev.once.tck.FaultProxy;
import java.time.Duration;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The database becomes unreachable (a {@link FaultProxy} cuts every connection and refuses new
 * ones): every operation throws {@link StoreUnavailableException} within a bounded time, no threads
 * leak, and the same store works again once the database is back, without being recreated.
 */
@Timeout(120) // the waits for a database that came back are bounded by polling, not preemptively
abstract class UnreachableDatabaseBehaviour {

  /**
   * Generous on purpose: the bound is what matters, not its exact size, on a busy machine. It also
   * bounds the wait for a database that came back: the pool may still be backing off between
   * connection attempts (HikariCP waits up to 5 s), so the first calls may still fail fast.
   */
  static final Duration BOUND = Duration.ofSeconds(10);

  final TestDatabase database;
  final String table;
  FaultProxy proxy;
  HikariDataSource pool;
  JdbcStore store;

  UnreachableDatabaseBehaviour(TestDatabase database) {
    this.database = database;
    this.table = Tables.unique("once_faults_" + database.name().toLowerCase(Locale.ROOT));
  }

  @BeforeEach
  void openThroughProxy() throws Exception {
    try (HikariDataSource direct = database.pool(1)) {
      database.openOnFreshTable(direct, table).close();
    }
    proxy = FaultProxy.to(database.port);
    pool = database.poolVia(proxy.port(), 4, 500);
    store = database.open(pool, table, false);
  }

  @AfterEach
  void closeAll() throws Exception {
    store.close();
    pool.close();
    proxy.close();
    try (HikariDataSource direct = database.pool(1)) {
      Tables.execute(direct, database.drop(table));
    }
  }

  void assertUnavailable(Runnable operation) {
    assertTimeoutPreemptively(
        BOUND,
        () -> assertThatThrownBy(operation::run).isInstanceOf(StoreUnavailableException.class));
  }

  ClaimResult.Claimed claim(RecordId id) {
    return (ClaimResult.Claimed)
        store.claim(JdbcStoreBehaviour.request(id, JdbcStoreBehaviour.LEASE));
  }

  @Test
  void aStoreBuiltWhileTheDatabaseIsDownFailsFastAndWorksOnceItIsBack() {
    proxy.cut();
    try (JdbcStore early = database.open(pool, table, false)) {
      assertUnavailable(
          () ->
              early.claim(
                  JdbcStoreBehaviour.request(
                      JdbcStoreBehaviour.newId(), JdbcStoreBehaviour.LEASE)));
      proxy.restore();
      assertThat(
              Eventually.available(
                  "the database is back",
                  BOUND,
                  () ->
                      early.claim(
                          JdbcStoreBehaviour.request(
                              JdbcStoreBehaviour.newId(), JdbcStoreBehaviour.LEASE))))
          .isInstanceOf(ClaimResult.Claimed.class);
    }
  }

  @Test
  void schemaCreationWhileTheDatabaseIsDownIsReportedAsUnavailable() {
    proxy.cut();
    assertUnavailable(() -> database.open(pool, table, true));
  }

  @Test
  void everyOperationFailsWithinABoundWhenTheDatabaseGoesAwayMidRun() {
    RecordId id = JdbcStoreBehaviour.newId();
    ClaimResult.Claimed c = claim(id);

    proxy.cut();

    assertUnavailable(
        () ->
            store.claim(
                JdbcStoreBehaviour.request(JdbcStoreBehaviour.newId(), JdbcStoreBehaviour.LEASE)));
    assertUnavailable(() -> store.get(id));
    assertUnavailable(() -> store.heartbeat(id, c.token(), JdbcStoreBehaviour.LEASE));
    assertUnavailable(() -> store.complete(id, c.token(), new byte[] {1}, JdbcStoreBehaviour.TTL));
    assertUnavailable(() -> store.purgeExpired(10));

    proxy.restore();

    assertThat(
            Eventually.available(
                "the database is back",
                BOUND,
                () -> store.complete(id, c.token(), new byte[] {1}, JdbcStoreBehaviour.TTL)))
        .isTrue();
    assertThat(store.get(id)).isPresent();
  }

  @Test
  void repeatedOutagesLeakNoThreads() throws Exception {
    cycle();
    int before = Thread.activeCount();
    for (int i = 0; i < 5; i++) {
      cycle();
    }
    Eventually.assertThat(
        "at most two threads more after five more outages",
        BOUND,
        () -> Thread.activeCount() <= before + 2);
  }

  private void cycle() {
    proxy.cut();
    assertUnavailable(() -> store.get(JdbcStoreBehaviour.newId()));
    proxy.restore();
    assertThat(
            Eventually.available(
                "the database is back", BOUND, () -> store.get(JdbcStoreBehaviour.newId())))
        .isEmpty();
  }
}

package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class MariaDbStoreTest extends JdbcStoreBehaviour {

  static final String TABLE = Tables.unique("once_test_mariadb");
  static HikariDataSource pool;

  @BeforeAll
  static void createTable() {
    pool = Services.mariaDbPool(16);
    Tables.execute(
        pool, "DROP TABLE IF EXISTS " + TABLE, "DROP SEQUENCE IF EXISTS " + TABLE + "_seq");
  }

  @AfterAll
  static void closePool() {
    if (pool != null) {
      Tables.execute(pool, TestDatabase.MARIADB.drop(TABLE));
    }
    Tables.close(pool);
  }

  @Override
  IdempotencyStore openStoreOnEmptyTable() {
    MariaDbStore s = MariaDbStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build();
    Tables.execute(pool, "DELETE FROM " + TABLE);
    return s;
  }

  @Test
  void scopesThatDifferOnlyInTrailingSpacesOrCaseAreDistinct() {
    ClaimResult.Claimed a = claim(RecordId.of(new Scope("tenant"), IdempotencyKey.of("k")), LEASE);
    ClaimResult.Claimed b = claim(RecordId.of(new Scope("tenant "), IdempotencyKey.of("k")), LEASE);
    ClaimResult.Claimed c = claim(RecordId.of(new Scope("TENANT"), IdempotencyKey.of("k")), LEASE);
    assertThat(a.token()).isNotEqualTo(b.token()).isNotEqualTo(c.token());
  }

  @Test
  void theClaimIsRightUnderSimultaneousAssignmentToo() throws Exception {
    try (HikariDataSource simultaneous =
        Services.mariaDbPool(
            4, "SET SESSION sql_mode = CONCAT(@@sql_mode, ',SIMULTANEOUS_ASSIGNMENT')")) {
      store.close();
      store = MariaDbStore.builder(simultaneous).tableName(TABLE).build();
      assertThat(Tables.count(simultaneous, "SELECT LOCATE('SIMULTANEOUS_ASSIGNMENT', @@sql_mode)"))
          .isPositive();
      aStaleLeaseIsStolenWithTheRecoveryPointAndTheZombieIsFencedOff();
      anExpiredRecordIsClaimedAfreshBeforeItIsPurged();
      aCompletedRecordIsReplayedWithItsResult();
    }
  }

  /**
   * With bulk statements, Connector/J answers a JDBC batch without update counts: the store could
   * not tell which leases its token draw granted, or which finishes held, so it refuses the batch
   * and leaves nothing behind (jdbc-stores.md, "Update counts are required").
   */
  @Test
  void aDriverAnsweringBatchesWithoutUpdateCountsIsRefusedAndLeavesNothingBehind() {
    String url = Services.mariaDbUrl(Services.MARIADB_HOST, Services.MARIADB_PORT);
    try (HikariDataSource bulk = Services.pool(url + "?useBulkStmts=true", "root", 2, 5_000)) {
      IdempotencyStore bulkStore = MariaDbStore.builder(bulk).tableName(TABLE).build();
      RecordId a = newId();
      RecordId b = newId();
      assertThatThrownBy(() -> bulkStore.claimAll(List.of(request(a, LEASE), request(b, LEASE))))
          .isInstanceOf(StoreUnavailableException.class)
          .hasStackTraceContaining("without update counts");
      assertThat(store.get(a)).isEmpty();
      assertThat(store.get(b)).isEmpty();

      ClaimResult.Claimed ca = claim(a, LEASE);
      ClaimResult.Claimed cb = claim(b, LEASE);
      byte[] result = {7};
      assertThatThrownBy(
              () ->
                  bulkStore.finishAll(
                      List.of(
                          Finish.complete(a, ca.token(), result, TTL),
                          Finish.complete(b, cb.token(), result, TTL))))
          .isInstanceOf(StoreUnavailableException.class)
          .hasStackTraceContaining("without update counts");
      assertThat(store.get(a))
          .get()
          .extracting(IdempotencyRecord::state)
          .isEqualTo(RecordState.IN_PROGRESS);
      assertThat(store.complete(b, cb.token(), result, TTL)).isTrue();
    }
  }

  @Test
  void waitersPollBecauseMariaDbDoesNotNotify() {
    assertThat(store.notifiesChanges()).isFalse();
  }
}

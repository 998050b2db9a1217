package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PostgresStoreTest extends JdbcStoreBehaviour {

  static final String TABLE = "once_test_pg";
  static HikariDataSource pool;

  @BeforeAll
  static void createTable() {
    pool = Services.postgresPool(16);
    Tables.execute(pool, "DROP TABLE IF EXISTS " + TABLE);
  }

  @AfterAll
  static void closePool() {
    Tables.close(pool);
  }

  @Override
  IdempotencyStore openStoreOnEmptyTable() {
    PostgresStore s = PostgresStore.builder(pool).tableName(TABLE).autoCreateSchema(true).build();
    Tables.execute(pool, "DELETE FROM " + TABLE);
    return s;
  }

  @Test
  void notifiesChangesThroughListenNotify() {
    assertThat(store.notifiesChanges()).isTrue();
  }

  @Test
  void aWaiterIsWokenWhenTheRecordCompletes() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    CompletableFuture<Void> change = store.awaitChange(id);
    // The first wake-up only says that the listener is now live; wait for it, then subscribe again.
    change.get(10, TimeUnit.SECONDS);
    CompletableFuture<Void> completion = store.awaitChange(id);
    Thread.sleep(200);
    assertThat(completion).isNotDone();
    store.complete(id, c.token(), new byte[] {1}, TTL);
    completion.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aWaiterIsWokenWhenTheKeyIsReleasedAndNotByOtherKeys() throws Exception {
    RecordId id = newId();
    RecordId other = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    ClaimResult.Claimed o = claim(other, LEASE);
    store.awaitChange(id).get(10, TimeUnit.SECONDS);
    CompletableFuture<Void> release = store.awaitChange(id);
    store.release(other, o.token());
    Thread.sleep(300);
    assertThat(release).isNotDone();
    store.release(id, c.token());
    release.get(10, TimeUnit.SECONDS);
  }
}

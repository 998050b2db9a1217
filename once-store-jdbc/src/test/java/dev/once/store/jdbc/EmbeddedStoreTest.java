package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedStoreTest extends JdbcStoreBehaviour {

  @TempDir
  Path dir;

  @Override
  IdempotencyStore openStoreOnEmptyTable() {
    return EmbeddedStore.builder(dir).tableName("once_test_embedded").build();
  }

  @Test
  void recordsSurviveClosingAndReopening() {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    store.complete(id, c.token(), new byte[] {42}, TTL);
    store.close();
    store = EmbeddedStore.builder(dir).tableName("once_test_embedded").build();
    assertThat(store.get(id)).get().satisfies(r -> assertThat(r.result()).containsExactly(42));
  }

  @Test
  void tokensKeepGrowingAcrossReopeningEvenPastAReservedBlock() {
    RecordId id = newId();
    long last = 0;
    for (int i = 0; i < 3; i++) {
      ClaimResult.Claimed c = claim(id, LEASE);
      assertThat(c.token()).isGreaterThan(last);
      last = c.token();
      store.release(id, c.token());
      store.close();
      store = EmbeddedStore.builder(dir).tableName("once_test_embedded").build();
    }
    for (int i = 0; i < SqliteDialect.TOKEN_BLOCK + 5; i++) {
      ClaimResult.Claimed c = claim(id, LEASE);
      assertThat(c.token()).isGreaterThan(last);
      last = c.token();
      store.release(id, c.token());
    }
  }

  @Test
  void aSecondProcessCannotOpenTheSameFile() {
    claim(newId(), LEASE);
    try (EmbeddedStore second = EmbeddedStore.builder(dir).tableName("once_test_embedded").build()) {
      assertThatThrownBy(() -> second.claim(request(newId(), LEASE))).isInstanceOf(StoreUnavailableException.class);
    } catch (StoreUnavailableException expected) {
      // Refused at open: just as good.
    }
  }

  @Test
  void aWaiterIsWokenInProcessWhenTheRecordCompletes() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.notifiesChanges()).isTrue();
    CompletableFuture<Void> change = store.awaitChange(id);
    assertThat(change).isNotDone();
    store.complete(id, c.token(), new byte[] {1}, TTL);
    change.get(1, TimeUnit.SECONDS);
  }

  @Test
  void operationsOnAClosedStoreAreRefused() {
    store.close();
    assertThatThrownBy(() -> store.get(newId())).isInstanceOf(StoreUnavailableException.class);
  }
}

package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.ClaimResult;
import dev.once.store.RecordId;
import dev.once.tck.Eventually;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PostgresUnreachableTest extends UnreachableDatabaseBehaviour {

  PostgresUnreachableTest() {
    super(TestDatabase.POSTGRESQL);
  }

  @Test
  void theChangeListenerReconnectsAndWakesWaitersAfterAnOutage() throws Exception {
    RecordId id = JdbcStoreBehaviour.newId();
    ClaimResult.Claimed c = claim(id);
    CompletableFuture<Void> duringOutage = store.awaitChange(id);
    proxy.cut();
    // Notifications sent while the listener was gone are lost, so it wakes everyone when it is
    // back.
    proxy.restore();
    duringOutage.get(20, TimeUnit.SECONDS);

    // Announced by a NOTIFY once the listener is back, or by the wake-up it sends when it is back.
    CompletableFuture<Void> afterOutage = store.awaitChange(id);
    Eventually.available(
        "the database is back",
        BOUND,
        () -> store.complete(id, c.token(), new byte[] {1}, JdbcStoreBehaviour.TTL));
    afterOutage.get(20, TimeUnit.SECONDS);
    assertThat(afterOutage).isDone();
  }

  @Test
  void closingTheStoreStopsTheListenerThread() throws Exception {
    store.awaitChange(JdbcStoreBehaviour.newId());
    assertThat(listenerThreads()).isPositive();
    store.close();
    assertThat(listenerThreads()).isZero();
  }

  private static long listenerThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("once-pg-listener") && t.isAlive())
        .count();
  }
}

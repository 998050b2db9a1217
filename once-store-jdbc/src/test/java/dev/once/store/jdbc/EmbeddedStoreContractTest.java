package dev.once.store.jdbc;

import dev.once.store.IdempotencyStore;
import dev.once.tck.FakeClock;
import dev.once.tck.IdempotencyStoreContract;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded store's clock is injectable, so the kit's leases and expiries pass without sleeping.
 */
class EmbeddedStoreContractTest extends IdempotencyStoreContract {

  @TempDir Path dir;

  private final FakeClock clock = FakeClock.create();

  @Override
  protected IdempotencyStore createStore() {
    return EmbeddedStore.builder(dir).tableName("once_tck_embedded").clock(clock).build();
  }

  /** Another file on the same clock: the store of {@link #createStore()} holds its file's lock. */
  @Override
  protected IdempotencyStore createIsolatedStore() {
    return EmbeddedStore.builder(dir.resolve("listing"))
        .tableName("once_tck_embedded")
        .clock(clock)
        .build();
  }

  // No makeForeign(): the store holds its file's lock, so no other version writes to it while it
  // runs.

  @Override
  protected void advanceTime(Duration duration) {
    clock.advance(duration);
  }
}

package dev.once.store;

import dev.once.tck.FakeClock;
import dev.once.tck.IdempotencyStoreContract;
import java.time.Duration;

/** Encryption changes nothing a store promises: the whole contract, through the decorator. */
class EncryptingStoreContractTest extends IdempotencyStoreContract {

  private final FakeClock clock = FakeClock.create();

  @Override
  protected IdempotencyStore createStore() {
    return EncryptingStore.of(
        InMemoryStore.builder().clock(clock).build(), EncryptingStoreTest.KEYS_V1);
  }

  @Override
  protected void advanceTime(Duration duration) {
    clock.advance(duration);
  }
}

package dev.once.store;

import dev.once.tck.FakeClock;
import dev.once.tck.IdempotencyStoreContract;
import java.time.Duration;

/** The in-memory store passes the contract, with time that moves only when a test moves it. */
class InMemoryStoreContractTest extends IdempotencyStoreContract {

  private final FakeClock clock = FakeClock.create();

  @Override
  protected IdempotencyStore createStore() {
    return InMemoryStore.builder().clock(clock).build();
  }

  @Override
  protected void advanceTime(Duration duration) {
    // Exactly the duration: a lease ends at the instant it reaches leaseUntil, not a tick later.
    clock.advance(duration);
  }
}

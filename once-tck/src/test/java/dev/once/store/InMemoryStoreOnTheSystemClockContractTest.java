package dev.once.store;

import dev.once.tck.IdempotencyStoreContract;
import java.time.Duration;

/**
 * The in-memory store passes the contract on the real clock too, the way a store on a server runs
 * it: by sleeping. This keeps the kit's sleeping path honest for the stores that cannot fake time.
 */
class InMemoryStoreOnTheSystemClockContractTest extends IdempotencyStoreContract {

  @Override
  protected IdempotencyStore createStore() {
    return InMemoryStore.create();
  }

  @Override
  protected Duration shortLease() {
    return Duration.ofMillis(150);
  }
}

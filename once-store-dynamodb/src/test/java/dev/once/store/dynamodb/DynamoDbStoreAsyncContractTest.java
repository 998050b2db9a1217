package dev.once.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.tck.EngineContract;
import dev.once.tck.FakeClock;
import dev.once.tck.IdempotencyStoreContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The contract kit against DynamoDB Local through the store's native asynchronous calls: a store
 * with an async client, whose blocking claim, get, complete, failFinal and release are here its
 * asynchronous ones awaited ({@link ThroughAsyncStore}), so every rule of the store contract holds
 * for the asynchronous API too; the store's clock is injected, as in {@link
 * DynamoDbStoreContractTest}. After each test, no asynchronous call has used the blocking executor.
 *
 * <p>The engine's contract, whose asynchronous checks drive {@code beginAsync} and the lease's
 * asynchronous finishes over the store's native calls, runs nested, on the system clock: its leases
 * end by waiting.
 */
class DynamoDbStoreAsyncContractTest extends IdempotencyStoreContract {

  private static String table;

  private final FakeClock clock = FakeClock.create();
  private ThroughAsyncStore store;

  @BeforeAll
  static void createTable() {
    table = LocalDynamoDb.newTable();
  }

  @Override
  protected IdempotencyStore createStore() {
    store =
        new ThroughAsyncStore(
            DynamoDbStore.builder(LocalDynamoDb.client(), table)
                .asyncClient(LocalDynamoDb.asyncClient())
                .clock(clock)
                .build());
    return store;
  }

  @AfterEach
  void noAsynchronousCallUsedTheBlockingExecutor() {
    if (store != null) {
      assertThat(store.bridgedCalls())
          .as("asynchronous calls run on the blocking executor")
          .isZero();
    }
  }

  @Override
  protected void advanceTime(Duration duration) {
    clock.advance(duration);
  }

  /** A table of its own: the listing scans the whole table (a blocking call in any case). */
  @Override
  protected IdempotencyStore createIsolatedStore() {
    return DynamoDbStore.builder(LocalDynamoDb.client(), LocalDynamoDb.newTable())
        .asyncClient(LocalDynamoDb.asyncClient())
        .clock(clock)
        .build();
  }

  @Override
  protected boolean makeForeign(RecordId id) {
    return LocalDynamoDb.makeForeign(table, id);
  }

  @Override
  protected int largeValueBytes() {
    return 300 * 1024;
  }

  /** The engine's promises over the store with an async client, its async checks included. */
  @Nested
  class Engine extends EngineContract {
    @Override
    protected IdempotencyStore createStore() {
      return DynamoDbStore.builder(LocalDynamoDb.client(), table)
          .asyncClient(LocalDynamoDb.asyncClient())
          .build();
    }
  }
}

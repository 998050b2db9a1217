package dev.once.store.dynamodb;

import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.tck.FakeClock;
import dev.once.tck.IdempotencyStoreContract;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;

/**
 * The contract kit against DynamoDB Local, with the store's clock injected so that lease and expiry
 * tests move time instead of sleeping. Values are capped at 300 KiB: a DynamoDB item holds 400 KB,
 * and the kit's large values are random, so compression cannot help (docs/dynamodb-store.md).
 */
class DynamoDbStoreContractTest extends IdempotencyStoreContract {

  private static String table;

  private final FakeClock clock = FakeClock.create();

  @BeforeAll
  static void createTable() {
    table = LocalDynamoDb.newTable();
  }

  @Override
  protected IdempotencyStore createStore() {
    return DynamoDbStore.builder(LocalDynamoDb.client(), table).clock(clock).build();
  }

  @Override
  protected void advanceTime(Duration duration) {
    clock.advance(duration);
  }

  /** A table of its own: the listing scans the whole table. */
  @Override
  protected IdempotencyStore createIsolatedStore() {
    return DynamoDbStore.builder(LocalDynamoDb.client(), LocalDynamoDb.newTable())
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
}

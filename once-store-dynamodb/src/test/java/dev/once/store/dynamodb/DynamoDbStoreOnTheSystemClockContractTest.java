package dev.once.store.dynamodb;

import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.tck.EngineContract;
import dev.once.tck.IdempotencyStoreContract;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;

/**
 * The contract kit against DynamoDB Local on the system clock, sleeping where time must pass, as in
 * production.
 */
class DynamoDbStoreOnTheSystemClockContractTest extends IdempotencyStoreContract {

  private static String table;

  @BeforeAll
  static void createTable() {
    table = LocalDynamoDb.newTable();
  }

  @Override
  protected IdempotencyStore createStore() {
    return DynamoDbStore.of(LocalDynamoDb.client(), table);
  }

  /** A table of its own: the listing scans the whole table. */
  @Override
  protected IdempotencyStore createIsolatedStore() {
    return DynamoDbStore.of(LocalDynamoDb.client(), LocalDynamoDb.newTable());
  }

  @Override
  protected boolean makeForeign(RecordId id) {
    return LocalDynamoDb.makeForeign(table, id);
  }

  @Override
  protected int largeValueBytes() {
    return 300 * 1024;
  }

  /**
   * The engine's promises (every claim finished, closed engine, slow and failing store) over this
   * store.
   */
  @Nested
  class Engine extends EngineContract {
    @Override
    protected IdempotencyStore createStore() {
      return DynamoDbStore.of(LocalDynamoDb.client(), table);
    }
  }
}

package dev.once.store.dynamodb;

import dev.once.store.IdempotencyStore;
import dev.once.tck.EngineContract;
import org.junit.jupiter.api.BeforeAll;

/** The engine's promises (every claim finished, closed engine, slow and failing store) over DynamoDB Local. */
class DynamoDbStoreEngineContractTest extends EngineContract {

  private static String table;

  @BeforeAll
  static void createTable() {
    table = LocalDynamoDb.newTable();
  }

  @Override
  protected IdempotencyStore createStore() {
    return DynamoDbStore.of(LocalDynamoDb.client(), table);
  }
}

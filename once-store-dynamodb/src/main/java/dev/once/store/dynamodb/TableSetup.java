package dev.once.store.dynamodb;

import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;

/** Creates the store's table for tests and development; see {@link DynamoDbStore#createTable}. */
final class TableSetup {

  private TableSetup() {}

  static void create(DynamoDbClient client, String table) {
    try {
      client.createTable(
          r ->
              r.tableName(table)
                  .billingMode(BillingMode.PAY_PER_REQUEST)
                  .attributeDefinitions(
                      AttributeDefinition.builder()
                          .attributeName(Items.SCOPE)
                          .attributeType(ScalarAttributeType.S)
                          .build(),
                      AttributeDefinition.builder()
                          .attributeName(Items.KEY)
                          .attributeType(ScalarAttributeType.S)
                          .build())
                  .keySchema(
                      KeySchemaElement.builder()
                          .attributeName(Items.SCOPE)
                          .keyType(KeyType.HASH)
                          .build(),
                      KeySchemaElement.builder()
                          .attributeName(Items.KEY)
                          .keyType(KeyType.RANGE)
                          .build()));
    } catch (ResourceInUseException e) {
      // It exists already: make sure it is active and has TTL on, as below.
    }
    client.waiter().waitUntilTableExists(r -> r.tableName(table));
    boolean ttlOn =
        client
            .describeTimeToLive(r -> r.tableName(table))
            .timeToLiveDescription()
            .timeToLiveStatusAsString()
            .startsWith("ENABL");
    if (!ttlOn) {
      client.updateTimeToLive(
          r ->
              r.tableName(table)
                  .timeToLiveSpecification(t -> t.attributeName(Items.TTL).enabled(true)));
    }
  }
}

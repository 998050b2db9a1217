package dev.once.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.LeaseToken;
import dev.once.store.StoreUnavailableException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The builder rejects bad options at once, naming them; an unreachable DynamoDB fails fast. */
class DynamoDbStoreBuilderTest {

  private static DynamoDbClient unreachable;

  @BeforeAll
  static void createClient() {
    // Nothing listens on port 1.
    unreachable = LocalDynamoDb.clientBuilder(URI.create("http://127.0.0.1:1")).build();
  }

  @AfterAll
  static void closeClient() {
    unreachable.close();
  }

  @Test
  void theClientAndTableNameAreRequiredAndTheNameMustBeValid() {
    assertThatThrownBy(() -> DynamoDbStore.builder(null, "records"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("client");
    for (String bad : new String[] {null, "", "ab", "has space", "x".repeat(256), "caf\u00e9"}) {
      assertThatThrownBy(() -> DynamoDbStore.builder(unreachable, bad))
          .as("%s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("tableName");
    }
  }

  @Test
  void optionsOutOfRangeAreRejectedByName() {
    DynamoDbStore.Builder builder = DynamoDbStore.builder(unreachable, "once_records");
    assertThatThrownBy(() -> builder.clock(null)).hasMessageContaining("clock");
    assertThatThrownBy(() -> builder.asyncClient(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("asyncClient");
    assertThatThrownBy(() -> builder.callTimeout(Duration.ZERO))
        .hasMessageContaining("callTimeout");
    assertThatThrownBy(() -> builder.callTimeout(Duration.ofMinutes(11)))
        .hasMessageContaining("callTimeout");
    assertThatThrownBy(() -> builder.retentionAfterExpiry(Duration.ofSeconds(-1)))
        .hasMessageContaining("retentionAfterExpiry");
    assertThatThrownBy(() -> builder.retentionAfterExpiry(Duration.ofDays(366)))
        .hasMessageContaining("retentionAfterExpiry");
    assertThatThrownBy(() -> builder.maxItemBytes(4095)).hasMessageContaining("maxItemBytes");
    assertThatThrownBy(() -> builder.maxItemBytes(DynamoDbStore.DYNAMODB_ITEM_LIMIT + 1))
        .hasMessageContaining("maxItemBytes");
    assertThatThrownBy(() -> builder.batchConcurrency(0)).hasMessageContaining("batchConcurrency");
    assertThatThrownBy(() -> builder.batchConcurrency(1001))
        .hasMessageContaining("batchConcurrency");
    builder
        .callTimeout(Duration.ofMillis(300))
        .retentionAfterExpiry(Duration.ZERO)
        .maxItemBytes(100_000)
        .batchConcurrency(1)
        .build()
        .close();
  }

  @Test
  void anUnreachableDynamoDbThrowsStoreUnavailableWithinTheCallTimeout() {
    DynamoDbStore store =
        DynamoDbStore.builder(unreachable, "once_records")
            .callTimeout(Duration.ofMillis(500))
            .build();
    long start = System.nanoTime();

    assertThatThrownBy(() -> store.get(dev.once.tck.Samples.newId()))
        .isInstanceOf(StoreUnavailableException.class);

    // A bound on failing, not a performance figure: generous, since the first SDK call loads
    // classes.
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void aBatchedHeartbeatAgainstAnUnreachableDynamoDbThrowsStoreUnavailableAtItsFirstFailure() {
    List<LeaseToken> leases = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      leases.add(new LeaseToken(dev.once.tck.Samples.newId(), i));
    }
    try (DynamoDbStore store =
        DynamoDbStore.builder(unreachable, "once_records")
            .callTimeout(Duration.ofMillis(500))
            .batchConcurrency(2)
            .build()) {
      long start = System.nanoTime();

      assertThatThrownBy(() -> store.heartbeat(leases, Duration.ofSeconds(30)))
          .isInstanceOf(StoreUnavailableException.class);

      // 250 rounds of failing calls would take far longer: the first failure ends the batch.
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }
  }

  @Test
  void aMissingTableIsAConfigurationErrorNotAnOutage() {
    DynamoDbStore store = DynamoDbStore.builder(LocalDynamoDb.client(), "no_such_table").build();

    assertThatThrownBy(() -> store.get(dev.once.tck.Samples.newId()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no_such_table");
  }
}

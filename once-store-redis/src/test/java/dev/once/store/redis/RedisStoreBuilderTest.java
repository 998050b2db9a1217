package dev.once.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.StoreUnavailableException;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The builder rejects bad options at once, naming them, and never needs a server to do so. */
class RedisStoreBuilderTest {

  private static RedisClient client;

  @BeforeAll
  static void createClient() {
    // Nothing listens on port 1, and the client never connects until build().
    client =
        RedisClient.create(
            RedisURI.builder()
                .withHost("127.0.0.1")
                .withPort(1)
                .withTimeout(Duration.ofMillis(500))
                .build());
  }

  @AfterAll
  static void shutdownClient() {
    client.shutdown();
  }

  @Test
  void aNullClientIsRejected() {
    assertThatThrownBy(() -> RedisStore.builder((RedisClient) null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("client");
  }

  @Test
  void aKeyPrefixMustBePrintableAsciiWithoutBraces() {
    RedisStore.Builder builder = RedisStore.builder(client);
    for (String bad :
        new String[] {null, "", "with space", "tag{", "}tag", "caf\u00e9", "x".repeat(101)}) {
      assertThatThrownBy(() -> builder.keyPrefix(bad))
          .as("%s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("keyPrefix");
    }
    builder.keyPrefix("payments:once:");
  }

  @Test
  void theCommandTimeoutMustBePositiveAndAtMostTenMinutes() {
    RedisStore.Builder builder = RedisStore.builder(client);
    for (Duration bad :
        new Duration[] {null, Duration.ZERO, Duration.ofMillis(-1), Duration.ofMinutes(11)}) {
      assertThatThrownBy(() -> builder.commandTimeout(bad))
          .as("%s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("commandTimeout");
    }
    builder.commandTimeout(Duration.ofMillis(250));
  }

  @Test
  void batchesAtOnceMustBeOneToTheEnginesMost() {
    RedisStore.Builder builder = RedisStore.builder(client);
    int most = dev.once.store.IdempotencyStore.MOST_BATCHES_AT_ONCE;
    for (int bad : new int[] {Integer.MIN_VALUE, -1, 0, most + 1}) {
      assertThatThrownBy(() -> builder.batchesAtOnce(bad))
          .as("%s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("batchesAtOnce");
    }
    builder.batchesAtOnce(most);
  }

  @Test
  void theRetentionMustBeZeroToThirtyDays() {
    RedisStore.Builder builder = RedisStore.builder(client);
    for (Duration bad : new Duration[] {null, Duration.ofMillis(-1), Duration.ofDays(31)}) {
      assertThatThrownBy(() -> builder.retentionAfterExpiry(bad))
          .as("%s", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("retentionAfterExpiry");
    }
    builder.retentionAfterExpiry(Duration.ZERO);
  }

  @Test
  void buildingAgainstAnUnreachableServerThrowsStoreUnavailable() {
    long start = System.nanoTime();

    assertThatThrownBy(() -> RedisStore.builder(client).build())
        .isInstanceOf(StoreUnavailableException.class);

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }
}

package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

class RelayBuilderTest {

  private final DataSource unused = new org.postgresql.ds.PGSimpleDataSource();
  private final Delivery nothing =
      pending -> CompletableFuture.completedFuture(DeliveryOutcome.DELIVERED);

  @Test
  void eachBadOptionIsRejectedByName() {
    OutboxRelay.Builder b = Outbox.postgres(unused).build().relay(nothing);
    assertThatThrownBy(() -> b.batchSize(0)).hasMessageContaining("batchSize");
    assertThatThrownBy(() -> b.workers(65)).hasMessageContaining("workers");
    assertThatThrownBy(() -> b.lease(Duration.ofMillis(999))).hasMessageContaining("lease");
    assertThatThrownBy(() -> b.deliveryTimeout(Duration.ZERO))
        .hasMessageContaining("deliveryTimeout");
    assertThatThrownBy(() -> b.pollInterval(null)).hasMessageContaining("pollInterval");
    assertThatThrownBy(() -> b.maxAttempts(0)).hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> b.retention(Duration.ofSeconds(-1))).hasMessageContaining("retention");
    assertThatThrownBy(() -> b.listener(null)).hasMessageContaining("listener");
    assertThatThrownBy(() -> Outbox.postgres(unused).build().relay(null))
        .hasMessageContaining("delivery");
  }

  @Test
  void aDeliveryTimeoutNotShorterThanTheLeaseIsAContradiction() {
    assertThatThrownBy(
            () ->
                Outbox.postgres(unused)
                    .build()
                    .relay(nothing)
                    .lease(Duration.ofSeconds(10))
                    .deliveryTimeout(Duration.ofSeconds(10))
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("shorter than lease");
  }

  @Test
  void outboxOptionsAreCheckedBeforeAnySqlRuns() {
    assertThatThrownBy(() -> Outbox.postgres(null)).hasMessageContaining("dataSource");
    assertThatThrownBy(() -> Outbox.postgres(unused).tableName("t; DROP TABLE x"))
        .hasMessageContaining("tableName");
    assertThatThrownBy(() -> Outbox.postgres(unused).name("")).hasMessageContaining("name");
    assertThatThrownBy(() -> Outbox.postgres(unused).queryTimeout(Duration.ofMillis(1500)))
        .hasMessageContaining("queryTimeout");
    assertThatThrownBy(() -> Outbox.postgres(unused).build().idempotencyKey("bad id"))
        .hasMessageContaining("messageId");
    assertThatThrownBy(
            () -> Outbox.postgres(unused).build().purgeDelivered(Duration.ofSeconds(-1), 1))
        .hasMessageContaining("retention");
  }
}

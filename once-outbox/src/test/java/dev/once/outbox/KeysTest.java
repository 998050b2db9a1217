package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.junit.jupiter.api.Test;

class KeysTest {

  @Test
  void theKeyIsAStableVersion5UuidOfTheOutboxNameAndTheMessageId() {
    String key = Keys.idempotencyKey("orders", "order-42");
    UUID uuid = UUID.fromString(key);
    assertThat(uuid.version()).isEqualTo(5);
    assertThat(uuid.variant()).isEqualTo(2);
    // Fixed forever (and equal to Python's uuid.uuid5(namespace, "orders\norder-42")): a change
    // would make every pending message run again downstream.
    assertThat(key)
        .isEqualTo(Keys.idempotencyKey("orders", "order-42"))
        .isEqualTo("f30c618c-141f-5b98-bab8-c1b8c53213ab");
  }

  @Test
  void otherOutboxesAndOtherIdsGetOtherKeys() {
    assertThat(Keys.idempotencyKey("orders", "1"))
        .isNotEqualTo(Keys.idempotencyKey("billing", "1"))
        .isNotEqualTo(Keys.idempotencyKey("orders", "2"));
  }
}

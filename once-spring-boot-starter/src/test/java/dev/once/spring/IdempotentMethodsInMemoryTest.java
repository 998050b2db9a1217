package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;

/** The method contract on the in-memory store, which the starter falls back to. */
@TestPropertySource(properties = "once.store.type=memory")
class IdempotentMethodsInMemoryTest extends IdempotentMethodsContract {

  @Autowired IdempotencyStore store;

  @Test
  void theStoreIsInMemory() {
    assertThat(store).isInstanceOf(InMemoryStore.class);
  }
}

package dev.once.servlet;

import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** Tests that share one running {@link GuardedApp}; each test uses its own keys and paths. */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class GuardedAppTest {

  GuardedApp shop;

  @BeforeAll
  void start() throws Exception {
    shop = GuardedApp.on(backingStore());
  }

  /** The store under the app: in memory here; the Postgres and Redis variants override it. */
  IdempotencyStore backingStore() throws Exception {
    return InMemoryStore.create();
  }

  @AfterAll
  void stop() throws Exception {
    shop.close();
  }
}

package dev.once.store;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ForwardingStoreTest {

  /**
   * A decorator may need to see every single write (encryption), so it does not pass on its store's
   * batching unless it overrides the batch calls itself; nor, then, may any thread's calls be
   * gathered through it.
   */
  @Test
  void aDecoratorOverABatchingStoreDoesNotBatch() {
    IdempotencyStore batching =
        new ForwardingStore() {
          private final IdempotencyStore store = InMemoryStore.create();

          @Override
          protected IdempotencyStore delegate() {
            return store;
          }

          @Override
          public boolean batches() {
            return true;
          }
        };
    IdempotencyStore decorator =
        new ForwardingStore() {
          @Override
          protected IdempotencyStore delegate() {
            return batching;
          }
        };

    assertThat(batching.batches()).isTrue();
    assertThat(decorator.batches()).isFalse();
    assertThat(batching.batchesOnThisThread()).isTrue();
    assertThat(decorator.batchesOnThisThread()).isFalse();
  }
}

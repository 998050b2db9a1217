package dev.once.store.redis;

import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.tck.EngineContract;
import dev.once.tck.IdempotencyStoreContract;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Nested;

/**
 * The contract kit against the machine's Redis at 127.0.0.1:6379, under a key prefix of this run's
 * own.
 */
class RedisStoreContractTest extends IdempotencyStoreContract {

  private static final String PREFIX = LocalRedis.uniquePrefix();

  @Override
  protected IdempotencyStore createStore() {
    return RedisStore.builder(LocalRedis.client()).keyPrefix(PREFIX).build();
  }

  /** A prefix of its own: the listing sees every record under its prefix. */
  @Override
  protected IdempotencyStore createIsolatedStore() {
    return RedisStore.builder(LocalRedis.client()).keyPrefix(LocalRedis.uniquePrefix()).build();
  }

  /** State {@code A}: one this version does not know, as a later version might add. */
  @Override
  protected boolean makeForeign(RecordId id) {
    LocalRedis.raw()
        .hset(
            new KeyLayout(PREFIX).recordKey(id),
            "s".getBytes(StandardCharsets.US_ASCII),
            "A".getBytes(StandardCharsets.US_ASCII));
    return true;
  }

  // No serverPort(): the kit's broken-connection batch test expects a batch that is one
  // transaction. A pipelined batch whose connection breaks loses replies of claims Redis applied,
  // and such a lease is held by nobody until it ends, as a single claim's would be; releasing what
  // was granted is tested in RedisStoreTest with a claim that fails on the server instead.

  /**
   * The engine's promises (every claim finished, closed engine, slow and failing store) over this
   * store.
   */
  @Nested
  class Engine extends EngineContract {
    @Override
    protected IdempotencyStore createStore() {
      return RedisStore.builder(LocalRedis.client()).keyPrefix(PREFIX).build();
    }
  }

  /**
   * The same promises with four batches at once: calls go at once while fewer are under way, so
   * singles and batches carrying one record meet at the store.
   */
  @Nested
  class EngineWithFourBatchesAtOnce extends EngineContract {
    @Override
    protected IdempotencyStore createStore() {
      return RedisStore.builder(LocalRedis.client()).keyPrefix(PREFIX).batchesAtOnce(4).build();
    }
  }
}

package dev.once.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import java.util.List;
import java.util.function.Function;

/**
 * A store on a pool of its own, which closing the store closes too: the contract kit's store
 * through a {@link dev.once.tck.FaultProxy}. The batch calls are forwarded as they are, so the kit
 * tests the store's own batches, not the SPI's defaults.
 */
final class OwnPoolStore extends ForwardingStore {

  private final HikariDataSource pool;
  private final IdempotencyStore store;

  OwnPoolStore(HikariDataSource pool, Function<HikariDataSource, IdempotencyStore> open) {
    this.pool = pool;
    this.store = open.apply(pool);
  }

  @Override
  protected IdempotencyStore delegate() {
    return store;
  }

  @Override
  public boolean batches() {
    return store.batches();
  }

  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return store.claimAll(requests);
  }

  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return store.finishAll(finishes);
  }

  @Override
  public void close() {
    try {
      store.close();
    } finally {
      pool.close();
    }
  }
}

package dev.once.store.jdbc;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import java.util.List;

/**
 * The stores on a database server (PostgreSQL, MariaDB): {@link #claimAll} and {@link #finishAll}
 * run each batch in one transaction, one commit instead of one per record, so {@link #batches()} is
 * true and the engine gathers concurrent callers into them.
 *
 * <p>The embedded store keeps the one-call-per-record defaults: its group commit already shares one
 * disk sync among concurrent callers, and its claims draw tokens from blocks that must never be
 * rolled back after use, which a batch's transaction could do.
 */
abstract class ServerStore extends JdbcStore {

  ServerStore(Dialect dialect, Connections connections, int timeoutSeconds, ChangeFeed feed) {
    super(dialect, connections, timeoutSeconds, feed);
  }

  @Override
  public boolean batches() {
    return true;
  }

  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return operations.claimAll(requests);
  }

  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return operations.finishAll(finishes);
  }
}

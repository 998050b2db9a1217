package dev.once.store.jdbc;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The common body of the public JDBC stores: the contract, delegated once to {@link JdbcOperations}
 * over the store's own connections, and the change feed's lifecycle.
 */
abstract class JdbcStore implements IdempotencyStore {

  final Dialect dialect;
  final Statements statements;
  final int timeoutSeconds;
  final ChangeFeed feed;
  final Connections connections;
  final JdbcOperations operations;

  JdbcStore(Dialect dialect, Connections connections, int timeoutSeconds, ChangeFeed feed) {
    this.dialect = dialect;
    this.statements = new Statements(dialect);
    this.timeoutSeconds = timeoutSeconds;
    this.feed = feed;
    this.connections = connections;
    this.operations = new JdbcOperations(dialect, statements, connections, timeoutSeconds, feed);
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return operations.claim(request);
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return operations.get(id);
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return operations.heartbeat(id, token, lease);
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    return operations.heartbeat(leases, lease);
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return operations.checkpoint(id, token, recoveryPoint, lease);
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return operations.complete(id, token, result, ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return operations.failFinal(id, token, result, ttl);
  }

  @Override
  public boolean release(RecordId id, long token) {
    return operations.release(id, token);
  }

  @Override
  public boolean endLease(RecordId id, long token) {
    return operations.endLease(id, token);
  }

  @Override
  public int purgeExpired(int batchSize) {
    return operations.purgeExpired(batchSize);
  }

  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    return operations.inFlight(olderThan, limit);
  }

  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    return operations.awaitChange(id);
  }

  @Override
  public boolean notifiesChanges() {
    return operations.notifiesChanges();
  }

  /** The qualified name of the table this store uses. */
  public String tableName() {
    return dialect.table.qualified();
  }

  TransactionalStore transactionalView() {
    return new TransactionalStore(dialect, statements, timeoutSeconds, feed);
  }

  /** Stops the store's own threads and connections; never closes the user's {@code DataSource}. */
  @Override
  public void close() {
    feed.close();
  }
}

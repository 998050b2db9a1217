package dev.once.servlet;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/** An in-memory store that remembers every record id ever claimed, to tell which are still there. */
final class RecordingStore implements IdempotencyStore {

  private final InMemoryStore delegate = InMemoryStore.create();
  private final Set<RecordId> claimed = ConcurrentHashMap.newKeySet();

  /** The records claimed so far that still exist. */
  List<IdempotencyRecord> live() {
    return claimed.stream().map(delegate::get).flatMap(Optional::stream).collect(Collectors.toList());
  }

  int claimedIds() {
    return claimed.size();
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    claimed.add(request.id());
    return delegate.claim(request);
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return delegate.get(id);
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return delegate.heartbeat(id, token, lease);
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return delegate.checkpoint(id, token, recoveryPoint, lease);
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return delegate.complete(id, token, result, ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return delegate.failFinal(id, token, result, ttl);
  }

  @Override
  public boolean release(RecordId id, long token) {
    return delegate.release(id, token);
  }

  @Override
  public int purgeExpired(int batchSize) {
    return delegate.purgeExpired(batchSize);
  }

  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    return delegate.awaitChange(id);
  }

  @Override
  public boolean notifiesChanges() {
    return delegate.notifiesChanges();
  }
}

package dev.once.servlet;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * A store (in memory unless a test brings a real one) that remembers every record id ever claimed,
 * to tell which are still there.
 */
final class RecordingStore extends ForwardingStore {

  private final IdempotencyStore delegate;

  RecordingStore(IdempotencyStore delegate) {
    this.delegate = delegate;
  }

  private final Set<RecordId> claimed = ConcurrentHashMap.newKeySet();

  /** The records claimed so far that still exist. */
  List<IdempotencyRecord> live() {
    return claimed.stream()
        .map(delegate::get)
        .flatMap(Optional::stream)
        .collect(Collectors.toList());
  }

  int claimedIds() {
    return claimed.size();
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    claimed.add(request.id());
    return delegate.claim(request);
  }
}

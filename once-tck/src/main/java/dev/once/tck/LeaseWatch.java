package dev.once.tck;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A store decorator that notes when each lease was last extended — at its claim, then at every
 * heartbeat the store accepted — and the longest gap seen, so a test or a benchmark can prove that
 * no lease went a whole lease length without an extension (a lapse, after which a retry may steal
 * it). Times are this process's {@link System#nanoTime()} when the store answered.
 */
public final class LeaseWatch extends ForwardingStore {

  private final IdempotencyStore delegate;
  private final Map<RecordId, Long> lastExtended = new ConcurrentHashMap<>();
  private final Map<RecordId, Long> longestGap = new ConcurrentHashMap<>();

  private LeaseWatch(IdempotencyStore delegate) {
    this.delegate = delegate;
  }

  /** Watches the leases granted and extended by this store. */
  public static LeaseWatch wrap(IdempotencyStore store) {
    return new LeaseWatch(java.util.Objects.requireNonNull(store, "store"));
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    ClaimResult result = delegate.claim(request);
    if (result instanceof ClaimResult.Claimed) {
      lastExtended.put(request.id(), System.nanoTime());
      longestGap.remove(request.id());
    }
    return result;
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    boolean extended = delegate.heartbeat(id, token, lease);
    if (extended) {
      extendedAt(id, System.nanoTime());
    }
    return extended;
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    Set<LeaseToken> extended = delegate.heartbeat(leases, lease);
    long now = System.nanoTime();
    for (LeaseToken token : extended) {
      extendedAt(token.id(), now);
    }
    return extended;
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    boolean extended = delegate.checkpoint(id, token, recoveryPoint, lease);
    if (extended) {
      extendedAt(id, System.nanoTime());
    }
    return extended;
  }

  private void extendedAt(RecordId id, long now) {
    Long before = lastExtended.put(id, now);
    if (before != null) {
      longestGap.merge(id, now - before, Math::max);
    }
  }

  /**
   * The longest any watched lease went without an extension, counting the gap still open at {@code
   * now} for every lease claimed (so call it while the leases are still held).
   */
  public Duration longestGap(long now) {
    long longest = 0;
    for (Map.Entry<RecordId, Long> e : lastExtended.entrySet()) {
      longest =
          Math.max(longest, Math.max(now - e.getValue(), longestGap.getOrDefault(e.getKey(), 0L)));
    }
    return Duration.ofNanos(longest);
  }
}

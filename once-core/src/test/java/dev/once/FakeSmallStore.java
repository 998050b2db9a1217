package dev.once;

import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.ResultTooLargeException;
import java.time.Duration;

/**
 * A store with a small item limit, like DynamoDB's 400 KB: larger results are refused before
 * writing.
 */
final class FakeSmallStore extends ForwardingStore {
  private final IdempotencyStore delegate;
  private final int maxBytes;

  FakeSmallStore(IdempotencyStore delegate, int maxBytes) {
    this.delegate = delegate;
    this.maxBytes = maxBytes;
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  private byte[] fitting(byte[] value) {
    if (value.length > maxBytes) {
      throw new ResultTooLargeException(value.length + " bytes is over this store's " + maxBytes);
    }
    return value;
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] point, Duration lease) {
    return delegate.checkpoint(id, token, fitting(point), lease);
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return delegate.complete(id, token, fitting(result), ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return delegate.failFinal(id, token, fitting(result), ttl);
  }
}

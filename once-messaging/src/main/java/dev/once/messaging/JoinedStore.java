package dev.once.messaging;

import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;

/**
 * The store of the transactional consumer's engine: calls go to the transactional view of the
 * message being processed on this thread, so the claim and the record join its transaction.
 */
final class JoinedStore extends ForwardingStore {

  private final ThreadLocal<IdempotencyStore> current = new ThreadLocal<>();

  void bind(IdempotencyStore view) {
    current.set(view);
  }

  void unbind() {
    current.remove();
  }

  @Override
  protected IdempotencyStore delegate() {
    IdempotencyStore view = current.get();
    if (view == null) {
      throw new IllegalStateException("no message is being processed on this thread");
    }
    return view;
  }
}

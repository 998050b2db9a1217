package dev.once.store;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The futures handed out by {@link InMemoryStore#awaitChange}, per record. A change completes and
 * forgets all of a record's futures at once; a future that ends any other way (cancelled, timed
 * out, completed by its owner) removes itself, so abandoned waits never pile up.
 */
final class ChangeWaiters {

  // Each set is only touched inside a compute on its own key, or after it has been removed from the
  // map, so a plain HashSet is enough; removing one waiter of a herd stays O(1).
  private final ConcurrentHashMap<RecordId, Set<CompletableFuture<Void>>> byId =
      new ConcurrentHashMap<>();

  CompletableFuture<Void> subscribe(RecordId id) {
    CompletableFuture<Void> waiter = new CompletableFuture<>();
    byId.compute(
        id,
        (k, set) -> {
          Set<CompletableFuture<Void>> waiters = set == null ? new HashSet<>() : set;
          waiters.add(waiter);
          return waiters;
        });
    waiter.whenComplete((ignored, failure) -> unsubscribe(id, waiter));
    return waiter;
  }

  /**
   * Wakes everyone waiting on {@code id}. Call it after the change is visible: a waiter subscribes
   * before it reads, so it either is in the set removed here or reads the change itself.
   */
  void changed(RecordId id) {
    Set<CompletableFuture<Void>> waiters = byId.remove(id);
    if (waiters != null) {
      for (CompletableFuture<Void> waiter : waiters) {
        waiter.complete(null);
      }
    }
  }

  void wakeAll() {
    for (RecordId id : byId.keySet()) {
      changed(id);
    }
  }

  /** How many waits are pending; for tests that prove abandoned waits leave nothing behind. */
  int count() {
    int[] n = {0};
    for (RecordId id : byId.keySet()) {
      // Read under the key's lock: a set is not safe to read while a subscriber adds to it.
      byId.computeIfPresent(
          id,
          (k, set) -> {
            n[0] += set.size();
            return set;
          });
    }
    return n[0];
  }

  private void unsubscribe(RecordId id, CompletableFuture<Void> waiter) {
    byId.computeIfPresent(
        id,
        (k, set) -> {
          set.remove(waiter);
          return set.isEmpty() ? null : set;
        });
  }
}

package dev.once.store.jdbc;

import dev.once.store.RecordId;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The futures handed out by {@link ChangeFeed#await}, by record. A future leaves the map as soon as
 * it completes or is cancelled, so abandoned waits do not pile up.
 */
final class Waiters {

  private final ConcurrentHashMap<RecordId, Set<CompletableFuture<Void>>> byId =
      new ConcurrentHashMap<>();

  CompletableFuture<Void> register(RecordId id) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    // compute, not computeIfAbsent(...).add: the add must not land in a set that a concurrent
    // removal is dropping from the map, or the future would never be woken.
    byId.compute(
        id,
        (k, set) -> {
          Set<CompletableFuture<Void>> s = set == null ? ConcurrentHashMap.newKeySet() : set;
          s.add(f);
          return s;
        });
    f.whenComplete(
        (v, e) ->
            byId.computeIfPresent(
                id,
                (k, set) -> {
                  set.remove(f);
                  return set.isEmpty() ? null : set;
                }));
    return f;
  }

  void wake(RecordId id) {
    Set<CompletableFuture<Void>> set = byId.get(id);
    if (set != null) {
      completeAll(List.copyOf(set));
    }
  }

  /** Wakes everyone: used when notifications may have been missed (a reconnect, a shutdown). */
  void wakeAll() {
    completeAll(byId.values().stream().flatMap(Set::stream).toList());
  }

  /**
   * Completes a snapshot: a waiter woken here may subscribe again at once (completion runs its
   * code), and that new subscription is for the next change, not this one.
   */
  private static void completeAll(List<CompletableFuture<Void>> futures) {
    futures.forEach(f -> f.complete(null));
  }

  int size() {
    return byId.values().stream().mapToInt(Set::size).sum();
  }
}

package dev.once.store.jdbc;

import dev.once.store.RecordId;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The futures handed out by {@link ChangeFeed#await}, by record. A future leaves the map as soon as
 * it completes or is cancelled, so abandoned waits do not pile up.
 */
final class Waiters {

  private final ConcurrentHashMap<RecordId, Set<CompletableFuture<Void>>> byId = new ConcurrentHashMap<>();

  CompletableFuture<Void> register(RecordId id) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    byId.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet()).add(f);
    f.whenComplete((v, e) -> byId.computeIfPresent(id, (k, set) -> {
      set.remove(f);
      return set.isEmpty() ? null : set;
    }));
    return f;
  }

  void wake(RecordId id) {
    Set<CompletableFuture<Void>> set = byId.get(id);
    if (set != null) {
      set.forEach(f -> f.complete(null));
    }
  }

  /** Wakes everyone: used when notifications may have been missed (a reconnect, a shutdown). */
  void wakeAll() {
    byId.values().forEach(set -> set.forEach(f -> f.complete(null)));
  }

  int size() {
    return byId.values().stream().mapToInt(Set::size).sum();
  }
}

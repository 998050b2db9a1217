package dev.once.store;

import java.util.ArrayList;
import java.util.List;

/** The default batch calls, as single calls in a row. */
final class Batches {

  private Batches() {}

  /**
   * One claim per request; if one fails, the leases already granted are released before the failure
   * is rethrown, so that {@link IdempotencyStore#claimAll} is all or nothing. Releasing them is
   * safe: the caller never saw them, so nothing ran under them. A stolen one is left to its lease
   * ({@link ClaimResult.Claimed#releasableUnused}).
   */
  static List<ClaimResult> claimEach(IdempotencyStore store, List<ClaimRequest> requests) {
    List<ClaimResult> results = new ArrayList<>(requests.size());
    try {
      for (ClaimRequest request : requests) {
        results.add(store.claim(request));
      }
      return results;
    } catch (RuntimeException e) {
      for (int i = 0; i < results.size(); i++) {
        if (results.get(i) instanceof ClaimResult.Claimed c && c.releasableUnused()) {
          try {
            store.release(requests.get(i).id(), c.token());
          } catch (RuntimeException releaseFailure) {
            e.addSuppressed(releaseFailure);
          }
        }
      }
      throw e;
    }
  }
}

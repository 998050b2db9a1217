package dev.once.store;

import java.util.ArrayList;
import java.util.List;

/** The default batch calls, as single calls in a row. */
final class Batches {

  private Batches() {}

  /**
   * One claim per request; if one fails, the claims already granted are given back ({@link
   * IdempotencyStore#giveBackUnused}) before the failure is rethrown, so that {@link
   * IdempotencyStore#claimAll} is all or nothing: the caller never saw them, so nothing ran under
   * them.
   */
  static List<ClaimResult> claimEach(IdempotencyStore store, List<ClaimRequest> requests) {
    RecordId.requireDistinct(requests, ClaimRequest::id, "claims");
    List<ClaimResult> results = new ArrayList<>(requests.size());
    try {
      for (ClaimRequest request : requests) {
        results.add(store.claim(request));
      }
      return results;
    } catch (RuntimeException e) {
      for (int i = 0; i < results.size(); i++) {
        if (results.get(i) instanceof ClaimResult.Claimed c) {
          try {
            store.giveBackUnused(requests.get(i).id(), c);
          } catch (RuntimeException giveBackFailure) {
            e.addSuppressed(giveBackFailure);
          }
        }
      }
      throw e;
    }
  }
}

package dev.once.store;

import dev.once.Fingerprint;
import dev.once.internal.Arguments;
import java.time.Duration;
import java.util.Objects;

/**
 * What a claim asks of the store.
 *
 * @param id the record to claim
 * @param fingerprint the fingerprint of the request; a stale in-progress record is stolen only when
 *     its fingerprint equals this one, so a mismatching request never takes over another's work
 * @param lease how long the granted lease lasts, by the store's clock
 * @param ttl how long the record lives from the claim; the store keeps it at least until the lease
 *     ends
 */
public record ClaimRequest(RecordId id, Fingerprint fingerprint, Duration lease, Duration ttl) {

  public ClaimRequest {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Arguments.positive("lease", lease);
    Arguments.positive("ttl", ttl);
  }
}

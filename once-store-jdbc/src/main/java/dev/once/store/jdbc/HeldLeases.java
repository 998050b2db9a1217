package dev.once.store.jdbc;

import dev.once.store.LeaseToken;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The leases of one batched heartbeat, validated, in a fixed order, and findable by the {@code
 * (scope, idem_key)} columns a statement returns for the rows it extended.
 *
 * <p>The order is by scope, then key: two batches that share rows (a lease handed from one holder
 * to the next) then lock them in the same order and cannot deadlock on each other.
 */
final class HeldLeases {

  private static final Comparator<LeaseToken> BY_RECORD =
      Comparator.comparing((LeaseToken l) -> l.id().scope().value())
          .thenComparing(l -> l.id().key().value());

  private final List<LeaseToken> ordered;
  private final Map<Name, LeaseToken> byName;

  private HeldLeases(List<LeaseToken> ordered, Map<Name, LeaseToken> byName) {
    this.ordered = ordered;
    this.byName = byName;
  }

  /**
   * @throws NullPointerException if {@code leases} or one of them is null
   * @throws IllegalArgumentException if a record appears twice: the SPI allows each at most once
   */
  static HeldLeases of(Collection<LeaseToken> leases) {
    Objects.requireNonNull(leases, "leases");
    Map<Name, LeaseToken> byName = new HashMap<>(leases.size() * 2);
    for (LeaseToken lease : leases) {
      Objects.requireNonNull(lease, "a lease in leases");
      LeaseToken earlier = byName.putIfAbsent(Name.of(lease), lease);
      if (earlier != null) {
        throw new IllegalArgumentException(
            "leases name the record "
                + lease.id()
                + " twice (tokens "
                + earlier.token()
                + " and "
                + lease.token()
                + "); a batch may hold each record once");
      }
    }
    List<LeaseToken> ordered = new ArrayList<>(byName.values());
    ordered.sort(BY_RECORD);
    return new HeldLeases(ordered, byName);
  }

  boolean isEmpty() {
    return ordered.isEmpty();
  }

  int size() {
    return ordered.size();
  }

  /** The leases in consecutive runs of at most {@code size}, in lock order. */
  List<List<LeaseToken>> chunks(int size) {
    List<List<LeaseToken>> chunks = new ArrayList<>();
    for (int from = 0, to; from < ordered.size(); from = to) {
      to = from + Math.min(size, ordered.size() - from);
      chunks.add(ordered.subList(from, to));
    }
    return chunks;
  }

  /**
   * The lease on the record a statement named by its columns; the statement only names records of
   * the batch.
   */
  LeaseToken named(String scope, String key) {
    LeaseToken lease = byName.get(new Name(scope, key));
    if (lease == null) {
      throw new IllegalStateException(
          "the database extended a lease on a record outside the batch");
    }
    return lease;
  }

  /** A record as its columns spell it. */
  private record Name(String scope, String key) {
    static Name of(LeaseToken lease) {
      return new Name(lease.id().scope().value(), lease.id().key().value());
    }
  }
}

package dev.once.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What {@link IdempotencyStore#inFlight} found: in-progress records running at least a given time,
 * oldest first.
 *
 * @param records the records, oldest first by {@link IdempotencyRecord#createdAt()} (records whose
 *     creation time is unknown come first); at most the limit asked for
 * @param complete true when the store looked at every candidate, so {@code records} are exactly the
 *     oldest matches (all of them, if there are fewer than the limit); false when it stopped at its
 *     scan budget, so older matches may exist beyond what it examined
 */
public record InFlight(List<IdempotencyRecord> records, boolean complete) {

  /** The largest {@code limit} a caller may ask for: one call's answer stays small. */
  public static final int MAX_LIMIT = 1_000;

  /**
   * The longest {@code olderThan} a caller may ask for, a century: every store can subtract it from
   * its clock (longer spans overflow some of their time types), and no record lives that long.
   */
  public static final Duration MAX_OLDER_THAN = Duration.ofDays(36_500);

  /**
   * The listing's order: creation time, unknown ones first, then scope and key, so the order is
   * total. Stores that sort in memory sort by it; one whose index answers in creation order may
   * leave records created in the same instant in its index's order.
   */
  public static final Comparator<IdempotencyRecord> OLDEST_FIRST =
      Comparator.comparing(
              IdempotencyRecord::createdAt,
              Comparator.nullsFirst(Comparator.<Instant>naturalOrder()))
          .thenComparing(r -> r.id().scope().value())
          .thenComparing(r -> r.id().key().value());

  public InFlight {
    records = List.copyOf(Objects.requireNonNull(records, "records"));
  }

  /**
   * Checks the arguments of {@link IdempotencyStore#inFlight}, the same way for every store: a null
   * {@code olderThan} or one outside zero..{@link #MAX_OLDER_THAN}, or a {@code limit} outside
   * 1..{@value #MAX_LIMIT}, is refused.
   */
  public static void check(Duration olderThan, int limit) {
    Objects.requireNonNull(olderThan, "olderThan");
    if (olderThan.isNegative() || olderThan.compareTo(MAX_OLDER_THAN) > 0) {
      throw new IllegalArgumentException(
          "olderThan must be between zero and " + MAX_OLDER_THAN + ", was " + olderThan);
    }
    if (limit < 1 || limit > MAX_LIMIT) {
      throw new IllegalArgumentException(
          "limit must be between 1 and " + MAX_LIMIT + ", was " + limit);
    }
  }
}

package dev.once.chaos;

import java.time.Duration;

/**
 * What one failover round measured: load on the primary, SIGKILL of the primary, promotion of the
 * replica, then an audit of the promoted replica and a final retry of every key there.
 *
 * @param replication how the primary replicated
 * @param effects where the operations wrote their effect
 * @param attempted operations started (one new key each)
 * @param acknowledged operations whose completion the store acknowledged before the kill
 * @param lostCompletions acknowledged operations whose record is not COMPLETED on the promoted
 *     replica
 * @param lostEffects acknowledged operations whose effect row is missing on the promoted replica
 * @param inProgressAfterFailover records left IN_PROGRESS on the promoted replica (in-flight
 *     leases)
 * @param rerunAfterFailover acknowledged operations that the final retry ran a second time
 * @param duplicateAcknowledged acknowledged operations with more than one effect after the final
 *     retry
 * @param duplicateInFlight operations in flight at the crash (never acknowledged) with more than
 *     one effect after the final retry: the effect committed, its completion did not
 * @param unsettled operations the final retry could not finish (still in flight or store errors)
 * @param loadTime how long the load ran before the kill
 */
public record FailoverReport(
    Replication replication,
    EffectMode effects,
    int attempted,
    int acknowledged,
    int lostCompletions,
    int lostEffects,
    int inProgressAfterFailover,
    int rerunAfterFailover,
    int duplicateAcknowledged,
    int duplicateInFlight,
    int unsettled,
    Duration loadTime) {

  /** Whether nothing acknowledged was lost or ran twice, and every key settled. */
  public boolean acknowledgedSafe() {
    return lostCompletions == 0
        && lostEffects == 0
        && rerunAfterFailover == 0
        && duplicateAcknowledged == 0
        && unsettled == 0;
  }

  /** The table's header, for {@link #row()}. */
  public static String header() {
    return String.format(
        "%-18s %-13s %9s %6s %10s %8s %11s %8s %9s %9s %9s",
        "replication",
        "effects",
        "attempted",
        "acked",
        "lost recs",
        "lost fx",
        "in progress",
        "re-run",
        "dup acked",
        "dup i.f.",
        "unsettled");
  }

  /** One line of the table. */
  public String row() {
    return String.format(
        "%-18s %-13s %9d %6d %10d %8d %11d %8d %9d %9d %9d",
        replication,
        effects,
        attempted,
        acknowledged,
        lostCompletions,
        lostEffects,
        inProgressAfterFailover,
        rerunAfterFailover,
        duplicateAcknowledged,
        duplicateInFlight,
        unsettled);
  }
}

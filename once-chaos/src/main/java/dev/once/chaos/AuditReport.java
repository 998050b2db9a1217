package dev.once.chaos;

import java.time.Duration;

/**
 * The ledger audit of one chaos run. After the load, every operation is sent once more with its key
 * (the final retry), then the ledger is counted.
 *
 * @param target what ran, e.g. {@code gateway/redis (chained upstream)}
 * @param operations logical operations, one key each
 * @param completed operations the client saw completed (2xx) during the load
 * @param unknown operations whose outcome the client did not learn during the load
 * @param rejected operations answered with a final 4xx (none are expected)
 * @param exactlyOnce operations with exactly one effect after the final retry
 * @param duplicates operations with more than one effect
 * @param missing operations with no effect after the final retry settled them
 * @param lostRecords operations the client saw completed whose final retry was not a replay of the
 *     same answer (the record was lost, so the operation ran again or answered differently)
 * @param stuck operations the final retry could not settle: still in flight well after the lease
 * @param reforwardsAfterCrash extra deliveries to the upstream after a crash or store restart had
 *     abandoned a lease (the documented ambiguous case; only the gateway can tell)
 * @param unexplainedReforwards extra deliveries with no crash in between, or with a reused token
 * @param kills SIGKILLs of the server process
 * @param storeRestarts SIGKILLs and restarts of the store process
 * @param droppedResponses responses the fault proxy swallowed after the server had answered
 * @param slowOperations operations whose upstream was slower than the lease
 * @param retries requests the clients repeated (attempts beyond the first)
 * @param duration wall time of the load and the final retry
 */
public record AuditReport(
    String target,
    int operations,
    int completed,
    int unknown,
    int rejected,
    int exactlyOnce,
    int duplicates,
    int missing,
    int lostRecords,
    int stuck,
    int reforwardsAfterCrash,
    int unexplainedReforwards,
    int kills,
    int storeRestarts,
    int droppedResponses,
    int slowOperations,
    long retries,
    Duration duration) {

  /**
   * No duplicate or missing effect, no lost record, nothing stuck, no unexplained re-forward, no
   * refusal.
   */
  public boolean passed() {
    return duplicates == 0
        && missing == 0
        && lostRecords == 0
        && stuck == 0
        && unexplainedReforwards == 0
        && rejected == 0
        && exactlyOnce == operations;
  }

  /** The table's header, for {@link #row()}. */
  public static String header() {
    return String.format(
        "%-36s %6s %6s %6s %5s %6s %5s %5s %5s %5s %9s %9s %5s %8s %6s %5s %7s %6s  %s",
        "target",
        "ops",
        "done",
        "unkn",
        "rej",
        "once",
        "dup",
        "miss",
        "lost",
        "stuck",
        "refwd-crsh",
        "refwd-bug",
        "kills",
        "st-rstrt",
        "drops",
        "slow",
        "retries",
        "secs",
        "verdict");
  }

  /** One line of the table. */
  public String row() {
    return String.format(
        "%-36s %6d %6d %6d %5d %6d %5d %5d %5d %5d %9d %9d %5d %8d %6d %5d %7d %6d  %s",
        target,
        operations,
        completed,
        unknown,
        rejected,
        exactlyOnce,
        duplicates,
        missing,
        lostRecords,
        stuck,
        reforwardsAfterCrash,
        unexplainedReforwards,
        kills,
        storeRestarts,
        droppedResponses,
        slowOperations,
        retries,
        duration.toSeconds(),
        passed() ? "PASS" : "FAIL");
  }
}

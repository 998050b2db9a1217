package dev.once.tck;

import dev.once.Fingerprint;
import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One operation of a concurrent history, with the real-time interval it ran in. Two events whose
 * intervals do not overlap happened in that order for every observer; overlapping ones may have
 * taken effect in either order.
 *
 * @param thread which worker ran it
 * @param seq its position in that worker's run
 * @param kind what it did
 * @param id the record it touched
 * @param token the token a write presented (or a claim was granted)
 * @param fingerprint the fingerprint a claim presented
 * @param bytes the result or recovery point a write presented
 * @param start {@link System#nanoTime()} before the call
 * @param end {@link System#nanoTime()} after it returned
 * @param succeeded what a write returned
 * @param claim what a claim returned
 * @param seen the record a get or a refused claim returned, or {@code null}
 */
record HistoryEvent(
    int thread,
    int seq,
    Kind kind,
    RecordId id,
    long token,
    @Nullable Fingerprint fingerprint,
    byte @Nullable [] bytes,
    long start,
    long end,
    boolean succeeded,
    @Nullable ClaimResult claim,
    @Nullable IdempotencyRecord seen) {

  enum Kind {
    CLAIM,
    COMPLETE,
    FAIL_FINAL,
    RELEASE,
    HEARTBEAT,
    CHECKPOINT,
    GET
  }

  boolean isWrite() {
    return kind != Kind.CLAIM && kind != Kind.GET;
  }

  boolean isFinishingWrite() {
    return kind == Kind.COMPLETE || kind == Kind.FAIL_FINAL || kind == Kind.RELEASE;
  }

  boolean isGrant() {
    return claim instanceof Claimed;
  }

  Claimed granted() {
    return (Claimed) Objects.requireNonNull(claim, "not a claim");
  }

  /** Whether this event certainly took effect before {@code other} began. */
  boolean precedes(HistoryEvent other) {
    return end < other.start;
  }

  static HistoryEvent ofClaim(
      int thread,
      int seq,
      RecordId id,
      Fingerprint fingerprint,
      long start,
      long end,
      ClaimResult claim) {
    long token = claim instanceof Claimed c ? c.token() : Long.MIN_VALUE;
    IdempotencyRecord seen = claim instanceof Existing e ? e.record() : null;
    return new HistoryEvent(
        thread,
        seq,
        Kind.CLAIM,
        id,
        token,
        fingerprint,
        null,
        start,
        end,
        claim instanceof Claimed,
        claim,
        seen);
  }

  @Override
  public String toString() {
    String what =
        switch (kind) {
          case CLAIM ->
              "claim -> "
                  + (claim instanceof Claimed c
                      ? "Claimed(token="
                          + c.token()
                          + (c.stolen() ? ", stolen" : "")
                          + ", leaseUntil="
                          + c.leaseUntil()
                          + ")"
                      : "Existing(" + seen + ")");
          case GET -> "get -> " + (seen == null ? "empty" : seen);
          default ->
              kind.name().toLowerCase(java.util.Locale.ROOT)
                  + "(token="
                  + token
                  + ") -> "
                  + succeeded;
        };
    return "thread " + thread + " #" + seq + " [" + start + ".." + end + "] " + id + ": " + what;
  }
}

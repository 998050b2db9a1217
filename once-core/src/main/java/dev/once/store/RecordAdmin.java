package dev.once.store;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What an operator may do to one record, written once for every console over a store (the gateway's
 * admin API, the Spring Boot Actuator endpoint): look it up, and force-release a key stuck in
 * progress. Callers authenticate and audit; this class decides.
 */
public final class RecordAdmin {

  /**
   * What a forced release did.
   *
   * @param result the answer
   * @param token the fencing token of the record read, for the audit trail; null if there was none
   */
  public record Release(Result result, @Nullable Long token) {
    public Release {
      Objects.requireNonNull(result, "result");
    }

    /** The result as consoles write it: {@code released}, {@code not-in-progress}, … */
    public String resultName() {
      return result.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
  }

  /** The answers to a forced release. */
  public enum Result {
    /** The key was in progress and is free now: the next request with it runs. */
    RELEASED,
    /** No live record has this scope and key. */
    ABSENT,
    /**
     * The record is finished: it is the truth about what happened, and releasing it would let a
     * retry run the operation again. Refused.
     */
    NOT_IN_PROGRESS,
    /** The record changed between the read and the release (finished, or taken over). */
    CHANGED_MEANWHILE
  }

  private final IdempotencyStore store;

  public RecordAdmin(IdempotencyStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /** The live record of {@code id}, if any. */
  public Optional<IdempotencyRecord> lookup(RecordId id) {
    return store.get(id);
  }

  /**
   * Releases {@code id} if it is in progress, fenced by the token read: a lease that moved on
   * meanwhile is never released. Use it only when the operation is known not to have happened (its
   * holder died before the effect, an upstream that did nothing): a release lets a retry run it.
   */
  public Release forceRelease(RecordId id) {
    Optional<IdempotencyRecord> found = store.get(id);
    if (found.isEmpty()) {
      return new Release(Result.ABSENT, null);
    }
    long token = found.get().token();
    if (found.get().state() != RecordState.IN_PROGRESS) {
      return new Release(Result.NOT_IN_PROGRESS, token);
    }
    return new Release(
        store.release(id, token) ? Result.RELEASED : Result.CHANGED_MEANWHILE, token);
  }

  /**
   * The in-progress records running at least {@code olderThan} by the store's clock, oldest first,
   * at most {@code limit} (1..{@value InFlight#MAX_LIMIT}); see {@link IdempotencyStore#inFlight}
   * for what running means and when the answer is incomplete.
   *
   * @throws IllegalArgumentException if {@code olderThan} is negative or {@code limit} out of range
   */
  public InFlight inFlight(java.time.Duration olderThan, int limit) {
    InFlight.check(olderThan, limit);
    return store.inFlight(olderThan, limit);
  }

  /**
   * What a purge did.
   *
   * @param purged expired records deleted
   * @param more whether it stopped at its bound with expired records possibly left: call again
   */
  public record Purged(long purged, boolean more) {}

  /**
   * Deletes expired records now, in batches of {@code batchSize}, at most {@code maxBatches} of
   * them, so one call is bounded however many records expired.
   */
  public Purged purgeExpired(int batchSize, int maxBatches) {
    if (batchSize < 1 || maxBatches < 1) {
      throw new IllegalArgumentException(
          "batchSize and maxBatches must be at least 1, were " + batchSize + ", " + maxBatches);
    }
    long total = 0;
    for (int i = 0; i < maxBatches; i++) {
      int deleted = store.purgeExpired(batchSize);
      total += deleted;
      if (deleted < batchSize) {
        return new Purged(total, false);
      }
    }
    return new Purged(total, true);
  }

  /**
   * A record's metadata for an operator, in order: never its stored result nor its recovery point,
   * which may hold personal data; only their presence and size. The token is text ({@link
   * #tokenText}). A finished record shows no lease: {@code leaseUntil} null, {@code
   * leaseRemainingMillis} 0.
   */
  public static Map<String, Object> describe(IdempotencyRecord r) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("scope", r.id().scope().value());
    out.put("key", r.id().key().value());
    out.put("state", r.state().name());
    out.put("token", tokenText(r.token()));
    out.put("fingerprint", r.fingerprint().encoded());
    // A finished record has no lease: no end in the future to mislead an operator.
    out.put("leaseUntil", r.state().isTerminal() ? null : r.leaseUntil().toString());
    out.put("leaseRemainingMillis", r.leaseRemaining().toMillis());
    out.put("expiresAt", r.expiresAt().toString());
    out.put("resultBytes", r.result() == null ? null : r.result().length);
    out.put("hasRecoveryPoint", r.recoveryPoint() != null);
    return out;
  }

  /**
   * A forced release's answer, the one shape every console answers: {@code result} ({@link
   * Release#resultName}) and {@code token}, the token of the record read as text, or null.
   */
  public static Map<String, Object> describe(Release release) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("result", release.resultName());
    out.put("token", release.token() == null ? null : tokenText(release.token()));
    return out;
  }

  /**
   * A fencing token as consoles write it: decimal digits in a JSON string, not a JSON number.
   * Tokens may exceed 2^53 (DynamoDB's are microseconds times 1,024, about 2^60), beyond which a
   * JavaScript number, and every JSON parser that reads numbers as doubles, silently changes the
   * last digits; an operator comparing a token with the audit log would then see another lease.
   */
  public static String tokenText(long token) {
    return Long.toString(token);
  }

  /**
   * An in-flight listing's body, the one shape every console answers: {@code records}, each {@link
   * #describe}'s fields plus {@code createdAt} and {@code runningMillis} (both null where the store
   * does not know when the record was created), and {@code complete}.
   */
  public static Map<String, Object> describe(InFlight found) {
    java.util.List<Map<String, Object>> records = new java.util.ArrayList<>();
    for (IdempotencyRecord r : found.records()) {
      Map<String, Object> one = describe(r);
      one.put("createdAt", r.createdAt() == null ? null : r.createdAt().toString());
      one.put("runningMillis", r.age().map(java.time.Duration::toMillis).orElse(null));
      records.add(one);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("records", records);
    out.put("complete", found.complete());
    return out;
  }
}

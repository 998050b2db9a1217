package dev.once.tck;

import dev.once.store.ClaimResult.Claimed;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.tck.HistoryEvent.Kind;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Checks a concurrent history from {@link RandomHistory} against what any linearisable store must
 * show, key by key. It does not search for a full linearisation; it checks the invariants that a
 * store with fencing tokens lives by:
 *
 * <ul>
 *   <li>tokens granted on a key are distinct, and a grant that finished before another began has
 *       the smaller token;
 *   <li>a write succeeds only with a granted token, never once a larger token had been granted
 *       before it began, and never after that token's own release or outcome;
 *   <li>a steal takes over the token granted just before it, with the same fingerprint, only once
 *       every lease end observed for that token has passed, and hands over a recovery point that
 *       was saved in the same incarnation (or none if none was);
 *   <li>a fresh claim on a key that had a lease follows a successful release of that lease;
 *   <li>at most one outcome is written per key; every terminal record read shows exactly that
 *       outcome, and nothing succeeds on the key after it;
 *   <li>every record read shows a granted token, no older than a grant that finished before the
 *       read began, and only recovery points that a successful checkpoint saved;
 *   <li>a refused claim never refuses a lease that the very same snapshot shows as stealable by it.
 * </ul>
 */
final class HistoryChecker {

  private static final int MAX_REPORTED = 20;

  private final Duration lease;
  private final List<String> violations = new ArrayList<>();

  HistoryChecker(Duration lease) {
    this.lease = lease;
  }

  /** Returns the violations found, the first few in full; empty if the history is consistent. */
  List<String> check(List<HistoryEvent> history) {
    Map<RecordId, List<HistoryEvent>> byKey = new LinkedHashMap<>();
    for (HistoryEvent event : history) {
      byKey.computeIfAbsent(event.id(), k -> new ArrayList<>()).add(event);
    }
    byKey.forEach(this::checkKey);
    return violations.size() <= MAX_REPORTED
        ? List.copyOf(violations)
        : List.copyOf(violations.subList(0, MAX_REPORTED));
  }

  int violationCount() {
    return violations.size();
  }

  private void checkKey(RecordId id, List<HistoryEvent> events) {
    List<HistoryEvent> grants =
        events.stream()
            .filter(HistoryEvent::isGrant)
            .sorted(Comparator.comparingLong(HistoryEvent::token))
            .toList();
    Map<Long, HistoryEvent> grantByToken = new HashMap<>();
    for (HistoryEvent grant : grants) {
      HistoryEvent twin = grantByToken.put(grant.token(), grant);
      if (twin != null) {
        fail("token " + grant.token() + " was granted twice", twin, grant);
      }
    }
    for (HistoryEvent a : grants) {
      for (HistoryEvent b : grants) {
        if (a.precedes(b) && a.token() >= b.token()) {
          fail("a later grant has a token that is not larger", a, b);
        }
      }
    }
    List<HistoryEvent> writes = events.stream().filter(e -> e.isWrite() && e.succeeded()).toList();
    checkFencing(writes, grants, grantByToken);
    checkOutcome(events, writes, grants);
    checkGrants(events, writes, grants);
    checkSnapshots(events, writes, grants, grantByToken);
  }

  private void checkFencing(
      List<HistoryEvent> writes, List<HistoryEvent> grants, Map<Long, HistoryEvent> grantByToken) {
    for (HistoryEvent write : writes) {
      if (!grantByToken.containsKey(write.token())) {
        fail("a write succeeded with a token never granted on this key", write);
      }
      for (HistoryEvent grant : grants) {
        if (grant.token() > write.token() && grant.precedes(write)) {
          fail(
              "a write with a stale token succeeded after a newer token was granted", grant, write);
        }
      }
      for (HistoryEvent finish : writes) {
        if (finish.isFinishingWrite()
            && finish.token() == write.token()
            && finish.precedes(write)) {
          fail("a write succeeded after its lease had been released or finished", finish, write);
        }
      }
    }
  }

  private void checkOutcome(
      List<HistoryEvent> events, List<HistoryEvent> writes, List<HistoryEvent> grants) {
    List<HistoryEvent> outcomes =
        writes.stream()
            .filter(e -> e.kind() == Kind.COMPLETE || e.kind() == Kind.FAIL_FINAL)
            .toList();
    if (outcomes.size() > 1) {
      fail("more than one outcome was written", outcomes.toArray(HistoryEvent[]::new));
    }
    HistoryEvent winner = outcomes.isEmpty() ? null : outcomes.get(0);
    for (HistoryEvent event : events) {
      IdempotencyRecord seen = event.seen();
      if (seen == null || !seen.state().isTerminal()) {
        continue;
      }
      if (winner == null) {
        fail("a terminal record was read that no successful write produced", event);
      } else if (seen.state() != stateOf(winner)
          || seen.token() != winner.token()
          || !Arrays.equals(seen.result(), winner.bytes())) {
        fail("a terminal record differs from the outcome that was written", winner, event);
      }
    }
    if (winner != null) {
      for (HistoryEvent grant : grants) {
        if (winner.precedes(grant)) {
          fail("a claim was granted on a finished record", winner, grant);
        }
      }
      for (HistoryEvent write : writes) {
        if (write != winner && winner.precedes(write)) {
          fail("a write succeeded on a finished record", winner, write);
        }
      }
    }
  }

  private void checkGrants(
      List<HistoryEvent> events, List<HistoryEvent> writes, List<HistoryEvent> grants) {
    HistoryEvent incarnation = null;
    for (int i = 0; i < grants.size(); i++) {
      HistoryEvent grant = grants.get(i);
      HistoryEvent previous = i == 0 ? null : grants.get(i - 1);
      Claimed claimed = grant.granted();
      if (!claimed.stolen()) {
        if (previous != null
            && writes.stream()
                .noneMatch(
                    w ->
                        w.kind() == Kind.RELEASE
                            && w.token() == previous.token()
                            && w.start() < grant.end())) {
          fail(
              "a fresh claim was granted while the previous lease was never released",
              previous,
              grant);
        }
        incarnation = grant;
        continue;
      }
      if (previous == null) {
        fail("a steal was granted on a key that never had a lease", grant);
        continue;
      }
      if (!Objects.equals(grant.fingerprint(), previous.fingerprint())) {
        fail("a steal was granted to a different fingerprint", previous, grant);
      }
      Instant stolenAt = claimed.leaseUntil().minus(lease);
      Instant observedEnd = previous.granted().leaseUntil();
      for (HistoryEvent event : events) {
        IdempotencyRecord seen = event.seen();
        if (seen != null
            && seen.state() == RecordState.IN_PROGRESS
            && seen.token() == previous.token()
            && seen.leaseUntil().isAfter(observedEnd)) {
          observedEnd = seen.leaseUntil();
        }
      }
      if (stolenAt.isBefore(observedEnd)) {
        fail(
            "a lease was stolen at "
                + stolenAt
                + " although it was seen running until "
                + observedEnd,
            previous,
            grant);
      }
      for (HistoryEvent write : writes) {
        if (write.isFinishingWrite()
            && write.token() == previous.token()
            && write.precedes(grant)) {
          fail("a lease was stolen after it had been released or finished", write, grant);
        }
      }
      checkHandOver(grant, incarnation, writes);
    }
  }

  private void checkHandOver(
      HistoryEvent steal, @Nullable HistoryEvent incarnation, List<HistoryEvent> writes) {
    long from = incarnation == null ? Long.MIN_VALUE : incarnation.token();
    List<HistoryEvent> checkpoints =
        writes.stream()
            .filter(
                w -> w.kind() == Kind.CHECKPOINT && w.token() >= from && w.token() < steal.token())
            .toList();
    byte[] handed = steal.granted().recoveryPoint();
    if (handed != null) {
      if (checkpoints.stream().noneMatch(c -> Arrays.equals(c.bytes(), handed))) {
        fail("a steal handed over a recovery point that no earlier holder saved", steal);
      }
    } else {
      checkpoints.stream()
          .filter(c -> c.precedes(steal))
          .findFirst()
          .ifPresent(
              c ->
                  fail(
                      "a steal handed over no recovery point although one had been saved",
                      c,
                      steal));
    }
  }

  private void checkSnapshots(
      List<HistoryEvent> events,
      List<HistoryEvent> writes,
      List<HistoryEvent> grants,
      Map<Long, HistoryEvent> grantByToken) {
    for (HistoryEvent event : events) {
      IdempotencyRecord seen = event.seen();
      if (seen == null) {
        continue;
      }
      if (!grantByToken.containsKey(seen.token())) {
        fail("a record was read with a token never granted on this key", event);
      }
      for (HistoryEvent grant : grants) {
        if (grant.precedes(event) && seen.token() < grant.token()) {
          fail(
              "a record was read with an older token than one granted before the read began",
              grant,
              event);
        }
      }
      byte[] point = seen.recoveryPoint();
      if (point != null
          && writes.stream()
              .noneMatch(
                  w ->
                      w.kind() == Kind.CHECKPOINT
                          && w.token() <= seen.token()
                          && Arrays.equals(w.bytes(), point))) {
        fail("a record was read with a recovery point no successful checkpoint saved", event);
      }
      if (event.kind() == Kind.CLAIM
          && seen.isStealable()
          && seen.fingerprint().equals(event.fingerprint())) {
        fail("a claim was refused although the record it returned was stealable by it", event);
      }
    }
  }

  private static RecordState stateOf(HistoryEvent outcome) {
    return outcome.kind() == Kind.COMPLETE ? RecordState.COMPLETED : RecordState.FAILED_FINAL;
  }

  private void fail(String what, HistoryEvent... events) {
    StringBuilder sb = new StringBuilder(what);
    for (HistoryEvent event : events) {
      sb.append("\n    ").append(event);
    }
    violations.add(sb.toString());
  }
}

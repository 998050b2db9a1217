package dev.once;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import dev.once.store.UnreadableRecordException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rules that turn a claim's answer, or its failure, into an {@link Admission}: the lease, a
 * replay, a mismatch, a refusal while another request holds the key, or a duplicate held until that
 * request finishes. Written once, as {@link Step}s, for {@link Once}'s blocking and asynchronous
 * methods alike.
 */
final class Admissions {

  private static final Logger log = LoggerFactory.getLogger(Admissions.class);
  private static final long MIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  private final IdempotencyStore store;
  private final Events events;
  private final Heartbeats heartbeats;
  private final Executor blocking;
  private final Executor finishing;
  private final @Nullable Batcher<ClaimRequest, ClaimResult> claims;
  private final @Nullable Batcher<Finish, Boolean> finishes;

  /**
   * @param blocking where the asynchronous calls of a store without an asynchronous client block
   * @param finishing where the finishing writes of admitted leases block: never refused
   * @param claims gathers concurrent claims into batches, or null where the store does not batch
   * @param finishes gathers concurrent finishing writes, or null where the store does not batch
   */
  Admissions(
      IdempotencyStore store,
      Events events,
      Heartbeats heartbeats,
      Executor blocking,
      Executor finishing,
      @Nullable Batcher<ClaimRequest, ClaimResult> claims,
      @Nullable Batcher<Finish, Boolean> finishes) {
    this.store = store;
    this.events = events;
    this.heartbeats = heartbeats;
    this.blocking = blocking;
    this.finishing = finishing;
    this.claims = claims;
    this.finishes = finishes;
  }

  /** Claims the key and answers the claim: {@link Once#begin}. */
  Step<Admission> begin(ClaimRequest request, ExecutionPolicy policy) {
    long claimedAt = System.nanoTime();
    return claiming(request).handle(claim -> admit(request, claim, policy, claimedAt));
  }

  /**
   * {@link Once#beginAll}'s claims, sent together: the i-th admission is what {@link #begin} would
   * answer the i-th request. Every lease the store granted is taken first, so each is heartbeated
   * from the moment the store answered: a claim waiting behind a duplicate's wait (up to maxWait)
   * would otherwise lapse and be stolen before its caller got it. Then the keys that others hold,
   * one at a time.
   */
  List<Admission> beginAll(List<ClaimRequest> requests, ExecutionPolicy policy) {
    long claimedAt = System.nanoTime();
    List<ClaimResult> results;
    try {
      results = store.claimAll(requests);
    } catch (StoreUnavailableException e) {
      List<Admission> refused = new ArrayList<>(requests.size());
      for (ClaimRequest r : requests) {
        refused.add(storeUnavailable(r.id(), e, policy));
      }
      return refused;
    } catch (UnreadableRecordException e) {
      // One record the store cannot read; nothing of the batch is held (claimAll is all or
      // nothing), so claim each alone and let only that one be answered as unreadable.
      List<Admission> each = new ArrayList<>(requests.size());
      for (ClaimRequest r : requests) {
        each.add(Step.block(begin(r, policy)));
      }
      return each;
    }
    Admission[] answered = new Admission[requests.size()];
    int taken = 0;
    try {
      for (; taken < requests.size(); taken++) {
        if (results.get(taken) instanceof ClaimResult.Claimed c) {
          answered[taken] = Step.block(proceed(requests.get(taken).id(), c, policy, claimedAt));
        }
      }
      for (int k = 0; k < requests.size(); k++) {
        if (answered[k] == null) {
          answered[k] = Step.block(admitHeld(requests.get(k), results.get(k), policy, claimedAt));
        }
      }
    } catch (RuntimeException | Error e) {
      // Nothing was handed to the caller, so nothing ran under any lease of this batch: give them
      // all back rather than leave them to heartbeats that nobody would ever stop.
      releaseAll(answered, requests, results, taken + 1);
      throw e;
    }
    List<Admission> admissions = new ArrayList<>(answered.length);
    for (int k = 0; k < answered.length; k++) {
      admissions.add(
          unlessLapsed(requests.get(k).id(), Objects.requireNonNull(answered[k]), policy));
    }
    return admissions;
  }

  /** A key of {@link #beginAll} the store did not grant: claimed again where that takes it over. */
  private Step<Admission> admitHeld(
      ClaimRequest request, ClaimResult result, ExecutionPolicy policy, long claimedAt) {
    ClaimRequest again = underRecordedVersion(request, result);
    Step<ClaimResult> claim = again == null ? Step.done(result) : new Claim(again, false);
    return claim.handle(c -> admit(request, c, policy, claimedAt));
  }

  /**
   * Gives back the leases answered so far and those claimed from {@code from} on: nothing ran under
   * them ({@link Lease#giveBack}, {@link IdempotencyStore#giveBackUnused}).
   */
  private void releaseAll(
      @Nullable Admission[] answered,
      List<ClaimRequest> requests,
      List<ClaimResult> results,
      int from) {
    for (Admission a : answered) {
      if (a instanceof Admission.Proceed p) {
        p.lease().giveBack();
      }
    }
    for (int j = from; j < requests.size(); j++) {
      if (results.get(j) instanceof ClaimResult.Claimed c) {
        RecordId id = requests.get(j).id();
        try {
          store.giveBackUnused(id, c);
        } catch (RuntimeException e) {
          log.warn(
              "could not give {} back (token {}); it is stolen when its lease ends",
              id,
              c.token(),
              e);
        }
      }
    }
  }

  /** What a duplicate of the request would be answered, without claiming: {@link Once#existing}. */
  Step<Optional<Admission>> existing(RecordId id, Fingerprint fingerprint) {
    return Step.call(
        Io.of(() -> store.get(id), () -> store.getAsync(id, blocking)),
        read -> {
          if (read.failed()) {
            return read.failure() instanceof StoreUnavailableException
                ? Step.done(Optional.empty())
                : unreadableOr(read.failure()).then(a -> Step.done(Optional.of(a)));
          }
          Optional<IdempotencyRecord> record = read.value();
          if (record.isEmpty()) {
            return Step.done(Optional.empty());
          }
          try {
            Admission settled = settle(id, record.get(), fingerprint);
            return Step.done(
                Optional.of(
                    settled != null ? settled : new Admission.InFlight(retryAfter(record.get()))));
          } catch (UnreadableRecordException e) {
            return Step.done(Optional.of(unreadable(e)));
          }
        });
  }

  // ------------------------------------------------------------------ claiming

  /**
   * A single claim, gathered with concurrent ones where the store batches; made again under the
   * record's own fingerprint version where that alone keeps it from taking over an ended lease
   * ({@link #underRecordedVersion}).
   */
  private Step<ClaimResult> claiming(ClaimRequest request) {
    return new Claim(request, true);
  }

  /**
   * One claim, gathered where the store batches and this thread may wait for a batch; the first
   * also claims again where {@link #underRecordedVersion} says so.
   */
  private final class Claim extends Step.Call<ClaimResult, ClaimResult> {
    private final ClaimRequest request;
    private final boolean first;
    private final @Nullable Batcher<ClaimRequest, ClaimResult> gathered;

    Claim(ClaimRequest request, boolean first) {
      this.request = request;
      this.first = first;
      this.gathered = store.batchesOnThisThread() ? claims : null;
    }

    @Override
    ClaimResult answer() {
      return gathered == null ? store.claim(request) : gathered.call(request);
    }

    @Override
    CompletionStage<ClaimResult> answerAsync() {
      return gathered == null ? store.claimAsync(request, blocking) : gathered.callAsync(request);
    }

    @Override
    Step<ClaimResult> then(Tried<ClaimResult> ended) {
      ClaimRequest again =
          !first || ended.failed() ? null : underRecordedVersion(request, ended.value());
      return again == null ? ended : new Claim(again, false);
    }
  }

  /**
   * The claim to make again when the store kept an ended lease from this request only because the
   * record was written under an older fingerprint version: the request matches it (it carries that
   * version, {@link Fingerprint#matches}), but the store compares encoded fingerprints, so without
   * this every key running during an upgrade would answer "in flight" until its record expired.
   * Claimed again under the record's own fingerprint, the same request takes the ended lease over
   * as any retry would; null when there is nothing to claim again.
   */
  private static @Nullable ClaimRequest underRecordedVersion(
      ClaimRequest request, ClaimResult result) {
    if (result instanceof ClaimResult.Existing e) {
      IdempotencyRecord record = e.record();
      Fingerprint recorded = record.fingerprint();
      if (record.state() == RecordState.IN_PROGRESS
          && record.isStealable()
          && !recorded.equals(request.fingerprint())
          && request.fingerprint().matches(recorded)) {
        return new ClaimRequest(request.id(), recorded, request.lease(), request.ttl());
      }
    }
    return null;
  }

  // ------------------------------------------------------------------ answering a claim

  /**
   * What a claim's outcome admits: its failure, answered by the failure mode; the lease; a replay
   * or a mismatch; or, while another request holds the key, a wait or a refusal.
   */
  private Step<Admission> admit(
      ClaimRequest request, Tried<ClaimResult> claim, ExecutionPolicy policy, long claimedAt) {
    if (claim.failed()) {
      return claim.failure() instanceof StoreUnavailableException e
          ? Step.done(storeUnavailable(request.id(), e, policy))
          : unreadableOr(claim.failure());
    }
    Step<Admission> settled = settled(request, claim.value(), policy, claimedAt);
    if (settled != null) {
      return settled;
    }
    IdempotencyRecord held = ((ClaimResult.Existing) claim.value()).record();
    return policy.inFlight() instanceof InFlightPolicy.Wait w
        ? awaitFirst(new Wait(request, policy, w.maxWait(), held))
        : Step.done(conflict(request.id(), held));
  }

  /**
   * What a claim settles for this request: the lease, a replay or a mismatch; null while another
   * request holds the key.
   */
  private @Nullable Step<Admission> settled(
      ClaimRequest request, ClaimResult claim, ExecutionPolicy policy, long claimedAt) {
    RecordId id = request.id();
    if (claim instanceof ClaimResult.Claimed c) {
      return proceed(id, c, policy, claimedAt);
    }
    try {
      Admission settled =
          settle(id, ((ClaimResult.Existing) claim).record(), request.fingerprint());
      return settled == null ? null : Step.done(settled);
    } catch (UnreadableRecordException e) {
      return Step.done(unreadable(e));
    }
  }

  /**
   * What an existing record settles for this request: a mismatch or a replay; null while the record
   * is in progress under the same request, which the caller answers as it waits or refuses.
   */
  private @Nullable Admission settle(
      RecordId id, IdempotencyRecord existing, Fingerprint fingerprint) {
    if (!fingerprint.matches(existing.fingerprint())) {
      events.fingerprintMismatch(id);
      return new Admission.FingerprintMismatch();
    }
    if (existing.state().isTerminal()) {
      Admission replay = Payloads.replay(existing);
      events.replayed(
          id, existing.state() == RecordState.COMPLETED ? Outcome.COMPLETED : Outcome.FAILED_FINAL);
      return replay;
    }
    return null;
  }

  /**
   * The lease, heartbeated from now on, unless it lapsed already. If the engine closed between its
   * check and the claim, the claim's lease is given back (nothing ran under it), and the steps fail
   * as a closed engine's do.
   */
  private Step<Admission> proceed(
      RecordId id, ClaimResult.Claimed c, ExecutionPolicy policy, long claimedAt) {
    HeldLease lease =
        new HeldLease(
            store,
            events,
            id,
            c.token(),
            c.stolen(),
            c.recoveryPoint(),
            policy,
            claimedAt,
            policy.heartbeat() ? heartbeats : null,
            finishing,
            finishes);
    if (policy.heartbeat()) {
      try {
        heartbeats.register(lease);
      } catch (IllegalStateException closed) {
        return lease.givingBack().handle(given -> Step.failed(closed));
      }
    }
    if (c.stolen()) {
      events.leaseStolen(id, c.token());
    }
    return Step.done(unlessLapsed(id, new Admission.Proceed(lease), policy));
  }

  /**
   * The admission, unless it is a lease whose local deadline passed before its caller got it (the
   * store was unreachable for a whole lease, or the claim's answer took that long): the key may be
   * another's by now, so it is never handed to work. Nothing ran under it: it is given back, and
   * the caller is told the key is in flight, to retry.
   */
  private Admission unlessLapsed(RecordId id, Admission admission, ExecutionPolicy policy) {
    if (!(admission instanceof Admission.Proceed p) || !p.lease().leaseLost()) {
      return admission;
    }
    log.warn("the lease on {} lapsed before its work began; giving it back", id);
    p.lease().giveBackAsync();
    events.inFlightConflict(id);
    // Whoever took the key over holds it for a whole lease at most.
    return new Admission.InFlight(Duration.ofSeconds(Math.max(1, policy.lease().toSeconds())));
  }

  Admission storeUnavailable(RecordId id, StoreUnavailableException e, ExecutionPolicy policy) {
    if (policy.failureMode() == FailureMode.FAIL_OPEN) {
      log.warn(
          "store unavailable; running {} WITHOUT idempotency protection (fail-open): {}",
          id,
          e.toString());
      events.failOpen(id, e);
      return new Admission.Unguarded(e);
    }
    log.warn("store unavailable; refusing {} (fail-closed): {}", id, e.toString());
    events.storeFailure(id, e);
    return new Admission.StoreUnavailable(policy.storeRetryAfter(), e);
  }

  /** A record the store cannot read is answered; any other failure passes on. */
  private static Step<Admission> unreadableOr(Throwable failure) {
    return failure instanceof UnreadableRecordException e
        ? Step.done(unreadable(e))
        : Step.failed(failure);
  }

  private static Admission unreadable(UnreadableRecordException e) {
    // The operation ran before (or began to): running it again could duplicate its effect.
    log.warn("{}; answering 'response unavailable'", e.getMessage());
    return new Admission.ResponseUnavailable();
  }

  private Admission conflict(RecordId id, IdempotencyRecord existing) {
    events.inFlightConflict(id);
    return new Admission.InFlight(retryAfter(existing));
  }

  /** The lease's remaining time by the store's clock, rounded up to whole seconds, at least one. */
  private static Duration retryAfter(IdempotencyRecord record) {
    long millis = record.leaseRemaining().toMillis();
    return Duration.ofSeconds(Math.max(1, (millis + 999) / 1000));
  }

  // ------------------------------------------------------------------ waiting

  /**
   * Holds a duplicate until the record changes, re-claiming after each change so that a released
   * key or an ended lease is taken over by this caller, and gives up at the deadline. Each round
   * subscribes to changes, re-claims, and, while the key is still held, waits for a change or the
   * round's end. The store failing meanwhile is the store failing while a request is in flight:
   * never a reason to run this duplicate unguarded (fail-open could run the work twice), so the
   * duplicate is told what is known.
   */
  private Step<Admission> awaitFirst(Wait wait) {
    long left = wait.left();
    if (left <= 0) {
      return Step.done(wait.giveUp());
    }
    return Step.call(
        subscription(wait.request.id()),
        subscribed -> {
          if (subscribed.failed()) {
            return waitFailed(wait, subscribed.failure());
          }
          CompletableFuture<Void> change = subscribed.value();
          long claimedAt = System.nanoTime();
          return claiming(wait.request)
              .handle(
                  claim -> {
                    Step<Admission> settled =
                        claim.failed()
                            ? waitFailed(wait, claim.failure())
                            : settled(wait.request, claim.value(), wait.policy, claimedAt);
                    if (settled != null) {
                      change.cancel(false);
                      return settled;
                    }
                    wait.last = ((ClaimResult.Existing) claim.value()).record();
                    return Step.call(
                        changeOrTimeout(change, wait.roundNanos(left)),
                        woken -> {
                          change.cancel(false);
                          return woken.failed() || !woken.value()
                              ? Step.done(wait.giveUp())
                              : awaitFirst(wait);
                        });
                  });
        });
  }

  private Step<Admission> waitFailed(Wait wait, Throwable failure) {
    if (failure instanceof StoreUnavailableException e) {
      log.debug(
          "store unavailable while {} waited on a request in flight: {}",
          wait.request.id(),
          e.toString());
      return Step.done(wait.giveUp());
    }
    return unreadableOr(failure);
  }

  /**
   * A subscription to changes of the record. Asynchronously, on the store executor for a store that
   * notifies: its subscription may wait for the store (Redis opens its pub/sub connection on the
   * first wait, and waits for each subscription's acknowledgement), and the caller's thread may be
   * an event loop, even the store client's own, whose reply it would then wait for.
   */
  private Io<CompletableFuture<Void>> subscription(RecordId id) {
    return Io.of(
        () -> store.awaitChange(id),
        () -> {
          if (!store.notifiesChanges()) {
            return CompletableFuture.completedFuture(store.awaitChange(id));
          }
          try {
            return CompletableFuture.supplyAsync(() -> store.awaitChange(id), blocking);
          } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(
                new StoreUnavailableException(
                    "no thread free to call the store: " + e.getMessage(), e));
          }
        });
  }

  /**
   * Waits for the change or the time; answers false if the waiting thread was interrupted. The
   * store's own future is only ever cancelled, never completed here.
   */
  private static Io<Boolean> changeOrTimeout(CompletableFuture<Void> change, long nanos) {
    return Io.of(
        () -> {
          try {
            change.get(nanos, TimeUnit.NANOSECONDS);
          } catch (TimeoutException | ExecutionException e) {
            // Either way: re-read the record.
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
          return true;
        },
        () -> {
          CompletableFuture<Boolean> woken = new CompletableFuture<>();
          change.whenComplete((v, e) -> woken.complete(true));
          // Not completeOnTimeout: when the change wakes it first (on the store's event loop),
          // that would cancel its timer under the JDK delay queue's lock, which parks the loop
          // whenever another thread holds it. A timer left to fire on a woken future does
          // nothing, and lives at most one round.
          CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS)
              .execute(() -> woken.complete(true));
          return woken;
        });
  }

  /**
   * One duplicate's wait for the request that holds its key: the deadline, the record as last seen
   * (whose lease bounds each round and answers the give-up) and the poll interval of a store that
   * sends no change notifications. Its rounds run one after another.
   */
  private final class Wait {
    final ClaimRequest request;
    final ExecutionPolicy policy;
    final long deadline;
    IdempotencyRecord last;
    long poll = MIN_POLL_NANOS;

    Wait(ClaimRequest request, ExecutionPolicy policy, Duration maxWait, IdempotencyRecord first) {
      this.request = request;
      this.policy = policy;
      this.deadline = System.nanoTime() + maxWait.toNanos();
      this.last = first;
    }

    long left() {
      return deadline - System.nanoTime();
    }

    /**
     * How long this round waits for a change: until the lease ends at the latest (a crashed holder
     * sends no notification), and no longer than the poll interval of a store that never notifies,
     * which doubles each round.
     */
    long roundNanos(long left) {
      long wait = Math.min(left, last.leaseRemaining().toNanos() + MIN_POLL_NANOS);
      if (store.notifiesChanges()) {
        return wait;
      }
      wait = Math.min(wait, poll);
      poll = Math.min(poll * 2, MAX_POLL_NANOS);
      return wait;
    }

    Admission giveUp() {
      return conflict(request.id(), last);
    }
  }
}

package dev.once;

import dev.once.internal.Arguments;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import dev.once.store.UnreadableRecordException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine: runs an operation at most once per (scope, key) and hands every retry the first
 * result.
 *
 * <pre>{@code
 * Once once = Once.builder(InMemoryStore.create()).build();
 * ExecutionResult<String> r = once.execute(Scope.of("merchant-42"), IdempotencyKey.of(key),
 *     Fingerprinter.defaults().json(body), ResultCodec.utf8(), ctx -> charge(body));
 * }</pre>
 *
 * <p>Thread-safe; build one per application and share it. {@link #close()} stops its heartbeats but
 * never closes the store.
 */
public final class Once implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Once.class);
  private static final long MIN_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(250);

  /**
   * The most single calls one gathered batch carries: enough that a store's round trip serves a
   * crowd, few enough that one batch stays a short transaction.
   */
  private static final int MAX_BATCH = 128;

  /**
   * How many gathered claim (and, separately, finish) calls may be under way at once. A database
   * claims a batch with one statement per record inside one transaction, so one batch at a time
   * would leave the rest of the connection pool idle; a few keep the batches large and the pool
   * busy.
   */
  private static final int BATCHES_IN_FLIGHT = 4;

  /** How long {@link #close()} waits for the store calls under way, finishing writes above all. */
  private static final Duration CLOSE_DRAIN = Duration.ofSeconds(5);

  private final IdempotencyStore store;
  private final ExecutionPolicy defaults;
  private final Events events;
  private final Heartbeats heartbeats;

  /** Where the asynchronous calls of a store without an asynchronous client block. */
  private final Executor blocking;

  /** Where the finishing writes of admitted leases block: {@code blocking}, never refused. */
  private final Executor finishing;

  /**
   * Gather concurrent callers' claims and finishing writes into batch calls, where the store
   * batches ({@link IdempotencyStore#batches()}); null where it does not.
   */
  private final @Nullable Batcher<ClaimRequest, ClaimResult> claims;

  private final @Nullable Batcher<dev.once.store.Finish, Boolean> finishes;

  /** The engine's own store executor, which it shuts down on close; null if it was given one. */
  private final @Nullable ExecutorService ownExecutor;

  private volatile boolean closed;

  private Once(Builder b) {
    this.store = b.listener == OnceListener.NONE ? b.store : new TimedStore(b.store, b.listener);
    this.defaults = b.defaults;
    this.events = Events.of(b.listener);
    this.heartbeats = new Heartbeats(store, b.scheduler, b.heartbeatThreads, b.heartbeatBatchSize);
    if (b.storeExecutor == null) {
      ExecutorService own = StoreExecutor.create(b.storeThreads);
      this.ownExecutor = own;
      this.blocking = own;
    } else {
      this.ownExecutor = null;
      this.blocking = b.storeExecutor;
    }
    this.finishing = new FinishingExecutor(blocking);
    if (store.batches()) {
      this.claims =
          new Batcher<>(new BatchedCalls.Claims(store, blocking), MAX_BATCH, BATCHES_IN_FLIGHT);
      this.finishes =
          new Batcher<>(new BatchedCalls.Finishes(store, finishing), MAX_BATCH, BATCHES_IN_FLIGHT);
    } else {
      this.claims = null;
      this.finishes = null;
    }
  }

  /**
   * A single claim, gathered with concurrent ones where the store batches; made again under the
   * record's own fingerprint version where that alone keeps it from taking over an ended lease
   * ({@link #underRecordedVersion}).
   */
  private ClaimResult claim(ClaimRequest request) {
    ClaimResult result = claimOnce(request);
    ClaimRequest again = underRecordedVersion(request, result);
    return again == null ? result : claimOnce(again);
  }

  private CompletionStage<ClaimResult> claimAsync(ClaimRequest request) {
    return claimOnceAsync(request)
        .thenCompose(
            result -> {
              ClaimRequest again = underRecordedVersion(request, result);
              return again == null
                  ? CompletableFuture.completedFuture(result)
                  : claimOnceAsync(again);
            });
  }

  private ClaimResult claimOnce(ClaimRequest request) {
    return claims != null && store.batchesOnThisThread()
        ? claims.call(request)
        : store.claim(request);
  }

  private CompletionStage<ClaimResult> claimOnceAsync(ClaimRequest request) {
    return claims != null && store.batchesOnThisThread()
        ? claims.callAsync(request)
        : store.claimAsync(request, blocking);
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
      if (record.state() == dev.once.store.RecordState.IN_PROGRESS
          && record.isStealable()
          && !recorded.equals(request.fingerprint())
          && request.fingerprint().matches(recorded)) {
        return new ClaimRequest(request.id(), recorded, request.lease(), request.ttl());
      }
    }
    return null;
  }

  /** Starts building an engine over this store. */
  public static Builder builder(IdempotencyStore store) {
    return new Builder(store);
  }

  /** An engine over this store with the default policy and no listener. */
  public static Once of(IdempotencyStore store) {
    return builder(store).build();
  }

  /**
   * Reports that work run under a lease from {@link #begin} ended, so that listeners (metrics,
   * tracing) count it as they count an {@link #execute} call, which reports its own. Adapters that
   * run the work themselves call it once per lease they finish after running it, with what the
   * finish answered; a lease released or abandoned without running anything is not reported.
   *
   * @param nanos how long the work took, from its admission
   */
  public void reportExecuted(Lease lease, Outcome outcome, Recording recording, long nanos) {
    events.executed(RecordId.of(lease.scope(), lease.key()), outcome, recording, nanos);
  }

  /** The policy used when a call names none. */
  public ExecutionPolicy defaults() {
    return defaults;
  }

  /** Runs the operation once per (scope, key) with the default policy and classifier. */
  public <T> ExecutionResult<T> execute(
      Scope scope,
      IdempotencyKey key,
      Fingerprint fingerprint,
      ResultCodec<T> codec,
      Operation<T> operation) {
    return execute(
        scope, key, fingerprint, codec, OutcomeClassifier.defaults(), defaults, operation);
  }

  /**
   * Runs the operation once per (scope, key).
   *
   * <p>If this call wins the claim, the operation runs here: its value is classified, and a
   * completed or finally failed outcome is recorded for replay; a transient outcome releases the
   * key. A transient exception propagates after the release (checked ones wrapped in {@link
   * OperationFailedException}). Otherwise the result says why nothing ran.
   */
  public <T> ExecutionResult<T> execute(
      Scope scope,
      IdempotencyKey key,
      Fingerprint fingerprint,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      ExecutionPolicy policy,
      Operation<T> operation) {
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(classifier, "classifier");
    Objects.requireNonNull(operation, "operation");
    return begin(scope, key, fingerprint, policy)
        .accept(
            new Admission.Visitor<ExecutionResult<T>>() {
              @Override
              public ExecutionResult<T> proceed(Admission.Proceed proceed) {
                return run(proceed.lease(), codec, classifier, operation);
              }

              @Override
              public ExecutionResult<T> unguarded(Admission.Unguarded unguarded) {
                return runUnguarded(scope, key, classifier, operation);
              }

              @Override
              public ExecutionResult<T> replay(Admission.Replay replay) {
                return decode(RecordId.of(scope, key), replay, codec);
              }

              @Override
              public ExecutionResult<T> replayFailure(Admission.ReplayFailure replayFailure) {
                return new ExecutionResult.Failed<>(replayFailure.failure());
              }

              @Override
              public ExecutionResult<T> inFlight(Admission.InFlight inFlight) {
                return new ExecutionResult.InFlight<>(inFlight.retryAfter());
              }

              @Override
              public ExecutionResult<T> fingerprintMismatch(
                  Admission.FingerprintMismatch mismatch) {
                return new ExecutionResult.FingerprintMismatch<>();
              }

              @Override
              public ExecutionResult<T> responseUnavailable(
                  Admission.ResponseUnavailable unavailable) {
                return new ExecutionResult.ResponseUnavailable<>();
              }

              @Override
              public ExecutionResult<T> storeUnavailable(Admission.StoreUnavailable unavailable) {
                return new ExecutionResult.StoreUnavailable<>(
                    unavailable.retryAfter(), unavailable.cause());
              }
            });
  }

  /**
   * Decides whether this caller may run the work for (scope, key): it claims the record atomically,
   * and in wait mode holds a duplicate until the first finishes. On {@link Admission.Proceed} the
   * caller must finish the lease exactly once.
   *
   * @throws IllegalStateException if the engine was closed (or the heartbeat scheduler it was given
   *     was shut down): refused before anything is claimed, so no key is left in flight
   */
  public Admission begin(
      Scope scope, IdempotencyKey key, Fingerprint fingerprint, ExecutionPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    RecordId id = RecordId.of(scope, key);
    ClaimRequest request = new ClaimRequest(id, fingerprint, policy.lease(), policy.ttl());
    requireOpen(policy);
    try {
      long claimedAt = System.nanoTime();
      return answer(
          request,
          claim(request),
          policy,
          claimedAt,
          admission -> admission,
          existing ->
              policy.inFlight() instanceof InFlightPolicy.Wait w
                  ? awaitFirst(new Wait(request, policy, w.maxWait(), existing))
                  : conflict(id, existing));
    } catch (StoreUnavailableException e) {
      return storeUnavailable(id, e, policy);
    } catch (UnreadableRecordException e) {
      return unreadable(e);
    } catch (ClosedWhileClaiming e) {
      e.lease.giveBack();
      throw e.reason;
    }
  }

  /**
   * {@link #begin} for many keys under one policy, for a consumer's polled batch: the claims go to
   * the store together ({@link IdempotencyStore#claimAll}: one round trip where the store batches),
   * and the i-th admission is what {@code begin} would answer the i-th claim. In wait mode a key
   * that another request holds is waited for after all are claimed, one key at a time, while the
   * leases already won are kept alive as usual. The caller finishes every {@link Admission.Proceed}
   * exactly once, as after {@code begin}; one it will not run (its batch stopped early) it gives
   * back ({@link Lease#giveBackAsync}).
   *
   * @throws IllegalArgumentException if two claims name the same record (send those in separate
   *     calls: the second is answered by the first's outcome)
   * @throws IllegalStateException if the engine was closed; no key is left in flight
   */
  public List<Admission> beginAll(List<Claim> claims, ExecutionPolicy policy) {
    Objects.requireNonNull(claims, "claims");
    Objects.requireNonNull(policy, "policy");
    List<ClaimRequest> requests = new ArrayList<>(claims.size());
    Set<RecordId> distinct = new HashSet<>();
    for (Claim c : claims) {
      RecordId id = RecordId.of(c.scope(), c.key());
      if (!distinct.add(id)) {
        throw new IllegalArgumentException("two claims name " + id + "; claim them separately");
      }
      requests.add(new ClaimRequest(id, c.fingerprint(), policy.lease(), policy.ttl()));
    }
    requireOpen(policy);
    if (requests.isEmpty()) {
      return List.of();
    }
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
      List<Admission> each = new ArrayList<>(claims.size());
      for (Claim c : claims) {
        each.add(begin(c.scope(), c.key(), c.fingerprint(), policy));
      }
      return each;
    }
    // First every lease the store granted, so each is heartbeated from the moment the store
    // answered: a claim waiting behind a duplicate's wait (up to maxWait) would otherwise lapse
    // and be stolen before its caller got it. Then the keys that others hold, one at a time.
    Admission[] answered = new Admission[requests.size()];
    int i = 0;
    try {
      for (; i < requests.size(); i++) {
        if (results.get(i) instanceof ClaimResult.Claimed c) {
          answered[i] = proceed(requests.get(i).id(), c, policy, claimedAt);
        }
      }
      for (int k = 0; k < requests.size(); k++) {
        if (answered[k] != null) {
          continue;
        }
        ClaimRequest request = requests.get(k);
        try {
          ClaimRequest again = underRecordedVersion(request, results.get(k));
          answered[k] =
              answer(
                  request,
                  again == null ? results.get(k) : claim(again),
                  policy,
                  claimedAt,
                  admission -> admission,
                  existing ->
                      policy.inFlight() instanceof InFlightPolicy.Wait w
                          ? awaitFirst(new Wait(request, policy, w.maxWait(), existing))
                          : conflict(request.id(), existing));
        } catch (StoreUnavailableException e) {
          answered[k] = storeUnavailable(request.id(), e, policy);
        } catch (UnreadableRecordException e) {
          answered[k] = unreadable(e);
        }
      }
    } catch (ClosedWhileClaiming e) {
      e.lease.giveBack();
      releaseAll(answered, requests, results, i + 1);
      throw e.reason;
    } catch (RuntimeException | Error e) {
      // Nothing was handed to the caller, so nothing ran under any lease of this batch: give them
      // all back rather than leave them to heartbeats that nobody would ever stop.
      releaseAll(answered, requests, results, i + 1);
      throw e;
    }
    List<Admission> admissions = new ArrayList<>(answered.length);
    for (int k = 0; k < answered.length; k++) {
      admissions.add(
          unlessLapsed(requests.get(k).id(), Objects.requireNonNull(answered[k]), policy));
    }
    return admissions;
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

  /**
   * {@link #begin}, without a thread waiting for the store where its client is asynchronous (see
   * {@link IdempotencyStore}); other stores are called on the engine's store executor ({@link
   * Builder#storeExecutor}). In wait mode a duplicate holds no thread while it waits. The stage
   * completes with the admission {@link #begin} would return, or exceptionally with the {@link
   * IllegalStateException} it would throw.
   */
  public CompletionStage<Admission> beginAsync(
      Scope scope, IdempotencyKey key, Fingerprint fingerprint, ExecutionPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    RecordId id = RecordId.of(scope, key);
    ClaimRequest request = new ClaimRequest(id, fingerprint, policy.lease(), policy.ttl());
    try {
      requireOpen(policy);
    } catch (IllegalStateException e) {
      return CompletableFuture.failedFuture(e);
    }
    long claimedAt = System.nanoTime();
    return claimAsync(request)
        .handle(
            (claim, failure) -> {
              if (failure != null) {
                Throwable cause = Causes.of(failure);
                if (cause instanceof StoreUnavailableException e) {
                  return CompletableFuture.completedFuture(storeUnavailable(id, e, policy));
                }
                if (cause instanceof UnreadableRecordException e) {
                  return CompletableFuture.completedFuture(unreadable(e));
                }
                return CompletableFuture.<Admission>failedFuture(cause);
              }
              try {
                return answer(
                    request,
                    claim,
                    policy,
                    claimedAt,
                    CompletableFuture::completedFuture,
                    existing ->
                        policy.inFlight() instanceof InFlightPolicy.Wait w
                            ? awaitFirstAsync(new Wait(request, policy, w.maxWait(), existing))
                            : CompletableFuture.completedFuture(conflict(id, existing)));
              } catch (UnreadableRecordException e) {
                return CompletableFuture.completedFuture(unreadable(e));
              }
            })
        .thenCompose(stage -> stage)
        .exceptionallyCompose(
            failure -> {
              if (Causes.of(failure) instanceof ClosedWhileClaiming e) {
                return e.lease
                    .giveBackAsync()
                    .handle(
                        (released, releaseFailure) -> {
                          throw e.reason;
                        });
              }
              return CompletableFuture.failedFuture(failure);
            });
  }

  /**
   * What a claim settles for this request, passed to {@code settled}: the lease, a replay or a
   * mismatch; or, while another request holds the key, the record as it stands, passed to {@code
   * held}, which waits or refuses.
   */
  private <R> R answer(
      ClaimRequest request,
      ClaimResult claim,
      ExecutionPolicy policy,
      long claimedAt,
      Function<Admission, R> settled,
      Function<IdempotencyRecord, R> held) {
    return claim.accept(
        new ClaimResult.Visitor<R>() {
          @Override
          public R claimed(ClaimResult.Claimed claimed) {
            return settled.apply(
                unlessLapsed(
                    request.id(), proceed(request.id(), claimed, policy, claimedAt), policy));
          }

          @Override
          public R existing(ClaimResult.Existing existing) {
            Optional<Admission> answer =
                settle(request.id(), existing.record(), request.fingerprint());
            return answer.isPresent() ? settled.apply(answer.get()) : held.apply(existing.record());
          }
        });
  }

  private Admission conflict(RecordId id, IdempotencyRecord existing) {
    events.inFlightConflict(id);
    return new Admission.InFlight(retryAfter(existing));
  }

  private static Admission unreadable(UnreadableRecordException e) {
    // The operation ran before (or began to): running it again could duplicate its effect.
    log.warn("{}; answering 'response unavailable'", e.getMessage());
    return new Admission.ResponseUnavailable();
  }

  /**
   * What a duplicate of (scope, key) would be answered, without claiming: a replay, a mismatch or
   * an in-flight conflict if a record exists; empty if none does (or the store cannot say), so a
   * claim would create one. For callers that must not create a record now but should still answer
   * retries, such as a rate limit on new keys. One store read; never runs or waits for anything.
   */
  public Optional<Admission> existing(Scope scope, IdempotencyKey key, Fingerprint fingerprint) {
    RecordId id = RecordId.of(scope, key);
    try {
      return existing(id, store.get(id), fingerprint);
    } catch (StoreUnavailableException e) {
      return Optional.empty();
    } catch (UnreadableRecordException e) {
      return Optional.of(unreadable(e));
    }
  }

  /** {@link #existing}, asynchronously, as {@link #beginAsync} calls the store. */
  public CompletionStage<Optional<Admission>> existingAsync(
      Scope scope, IdempotencyKey key, Fingerprint fingerprint) {
    RecordId id = RecordId.of(scope, key);
    return store
        .getAsync(id, blocking)
        .handle(
            (record, failure) -> {
              Throwable cause = failure == null ? null : Causes.of(failure);
              if (cause instanceof StoreUnavailableException) {
                return Optional.<Admission>empty();
              }
              try {
                if (cause != null) {
                  throw cause instanceof RuntimeException r
                      ? r
                      : new java.util.concurrent.CompletionException(cause);
                }
                return existing(id, record, fingerprint);
              } catch (UnreadableRecordException e) {
                return Optional.of(unreadable(e));
              }
            });
  }

  private Optional<Admission> existing(
      RecordId id, Optional<IdempotencyRecord> record, Fingerprint fingerprint) {
    if (record.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        settle(id, record.get(), fingerprint)
            .orElseGet(() -> new Admission.InFlight(retryAfter(record.get()))));
  }

  /**
   * What an existing record settles for this request: a mismatch or a replay; empty while the
   * record is in progress under the same request, which the caller answers as it waits or refuses.
   */
  private Optional<Admission> settle(
      RecordId id, IdempotencyRecord existing, Fingerprint fingerprint) {
    if (!fingerprint.matches(existing.fingerprint())) {
      events.fingerprintMismatch(id);
      return Optional.of(new Admission.FingerprintMismatch());
    }
    if (existing.state().isTerminal()) {
      Admission replay = Payloads.replay(existing);
      events.replayed(
          id,
          existing.state() == dev.once.store.RecordState.COMPLETED
              ? Outcome.COMPLETED
              : Outcome.FAILED_FINAL);
      return Optional.of(replay);
    }
    return Optional.empty();
  }

  /**
   * Holds a duplicate until the record changes, re-claiming after each change so that a released
   * key or an ended lease is taken over by this caller, and gives up at the deadline.
   */
  private Admission awaitFirst(Wait wait) {
    RecordId id = wait.request.id();
    while (true) {
      long left = wait.left();
      if (left <= 0) {
        return wait.giveUp();
      }
      // Subscribed inside the try: a subscription that fails (Redis's SUBSCRIBE timed out) is the
      // store failing while this duplicate waits on a request in flight, never a reason to run it
      // unguarded.
      CompletableFuture<Void> change = new CompletableFuture<>();
      try {
        change = store.awaitChange(id);
        long claimedAt = System.nanoTime();
        Optional<Admission> answer = wait.answer(claim(wait.request), claimedAt);
        if (answer.isPresent()) {
          return answer.get();
        }
        if (!awaitQuietly(change, wait.roundNanos(left))) {
          return wait.giveUp();
        }
      } catch (StoreUnavailableException e) {
        return unavailableWhileWaiting(id, wait.last, e);
      } finally {
        change.cancel(false);
      }
    }
  }

  /**
   * {@link #awaitFirst} without a thread: each round subscribes to changes, re-claims, and, while
   * the key is still held, resumes when the record changes or the round's wait is over.
   */
  private CompletionStage<Admission> awaitFirstAsync(Wait wait) {
    RecordId id = wait.request.id();
    long left = wait.left();
    if (left <= 0) {
      return CompletableFuture.completedFuture(wait.giveUp());
    }
    return subscribe(id)
        .handle(
            (change, failure) -> {
              if (failure == null) {
                return reclaimAsync(wait, change, left);
              }
              Throwable cause = Causes.of(failure);
              if (cause instanceof StoreUnavailableException e) {
                return CompletableFuture.completedFuture(unavailableWhileWaiting(id, wait.last, e));
              }
              return CompletableFuture.<Admission>failedFuture(cause);
            })
        .thenCompose(stage -> stage);
  }

  /**
   * Subscribes to changes of the record, on the store executor for a store that notifies: its
   * subscription may wait for the store (Redis opens its pub/sub connection on the first wait, and
   * waits for each subscription's acknowledgement), and the caller's thread may be an event loop,
   * even the store client's own, whose reply it would then wait for.
   */
  private CompletionStage<CompletableFuture<Void>> subscribe(RecordId id) {
    if (!store.notifiesChanges()) {
      try {
        return CompletableFuture.completedFuture(store.awaitChange(id));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    try {
      return CompletableFuture.supplyAsync(() -> store.awaitChange(id), blocking);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(
          new StoreUnavailableException("no thread free to call the store: " + e.getMessage(), e));
    }
  }

  /** One round of {@link #awaitFirstAsync}, subscribed to {@code change}. */
  private CompletionStage<Admission> reclaimAsync(
      Wait wait, CompletableFuture<Void> change, long left) {
    RecordId id = wait.request.id();
    long claimedAt = System.nanoTime();
    return claimAsync(wait.request)
        .handle(
            (claim, failure) -> {
              if (failure != null) {
                change.cancel(false);
                Throwable cause = Causes.of(failure);
                if (cause instanceof StoreUnavailableException e) {
                  return CompletableFuture.completedFuture(
                      unavailableWhileWaiting(id, wait.last, e));
                }
                return CompletableFuture.<Admission>failedFuture(cause);
              }
              Optional<Admission> answer;
              try {
                answer = wait.answer(claim, claimedAt);
              } catch (UnreadableRecordException e) {
                change.cancel(false);
                return CompletableFuture.completedFuture(unreadable(e));
              } catch (RuntimeException e) {
                change.cancel(false);
                throw e;
              }
              if (answer.isPresent()) {
                change.cancel(false);
                return CompletableFuture.completedFuture(answer.get());
              }
              // A separate future for the timeout: the store's own future must only ever be
              // cancelled.
              CompletableFuture<Void> woken = new CompletableFuture<>();
              change.whenComplete((v, e) -> woken.complete(null));
              // Not completeOnTimeout: when the change wakes it first (on the store's event loop),
              // that would cancel its timer under the JDK delay queue's lock, which parks the loop
              // whenever another thread holds it. A timer left to fire on a woken future does
              // nothing, and lives at most one round.
              CompletableFuture.delayedExecutor(wait.roundNanos(left), TimeUnit.NANOSECONDS)
                  .execute(() -> woken.complete(null));
              return woken.thenCompose(
                  v -> {
                    change.cancel(false);
                    return awaitFirstAsync(wait);
                  });
            })
        .thenCompose(stage -> stage);
  }

  /**
   * One duplicate's wait for the request that holds its key, whichever way it waits: the deadline,
   * the record as last seen (whose lease bounds each round and answers the give-up) and the poll
   * interval of a store that sends no change notifications. Its rounds run one after another.
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

    /** What a round's claim settled; empty, with the record noted, while the key is still held. */
    Optional<Admission> answer(ClaimResult claim, long claimedAt) {
      return Once.this.answer(
          request,
          claim,
          policy,
          claimedAt,
          Optional::of,
          held -> {
            last = held;
            return Optional.empty();
          });
    }

    /** How long this round waits for a change, and the next round's poll interval. */
    long roundNanos(long left) {
      long wait = waitNanos(left, last, poll);
      poll = nextPoll(poll);
      return wait;
    }

    Admission giveUp() {
      return conflict(request.id(), last);
    }
  }

  /**
   * How long one round of waiting lasts: until the lease ends at the latest (a crashed holder sends
   * no notification).
   */
  private long waitNanos(long left, IdempotencyRecord last, long poll) {
    long wait = Math.min(left, last.leaseRemaining().toNanos() + MIN_POLL_NANOS);
    return store.notifiesChanges() ? wait : Math.min(wait, poll);
  }

  private long nextPoll(long poll) {
    return store.notifiesChanges() ? poll : Math.min(poll * 2, MAX_POLL_NANOS);
  }

  private Admission unavailableWhileWaiting(
      RecordId id, IdempotencyRecord last, StoreUnavailableException e) {
    // The store said the first request is in flight: running this duplicate unguarded now
    // (fail-open) could run the operation twice. Answer what is known.
    log.debug("store unavailable while {} waited on a request in flight: {}", id, e.toString());
    return conflict(id, last);
  }

  /** Waits for the future or the time; false if interrupted. */
  private static boolean awaitQuietly(CompletableFuture<Void> change, long nanos) {
    try {
      change.get(nanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // Either way: re-read the record.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    return true;
  }

  private void requireOpen(ExecutionPolicy policy) {
    if (closed) {
      throw new IllegalStateException("this Once is closed");
    }
    if (policy.heartbeat() && !heartbeats.running()) {
      throw new IllegalStateException("the heartbeat scheduler of this Once was shut down");
    }
  }

  private Admission proceed(
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
      } catch (IllegalStateException e) {
        // Closed between the check and the claim: nothing ran, so the key must be released, not
        // left in flight; by a blocking call or an asynchronous one, as the caller called the
        // store.
        throw new ClosedWhileClaiming(lease, e);
      }
    }
    if (c.stolen()) {
      events.leaseStolen(id, c.token());
    }
    return new Admission.Proceed(lease);
  }

  private Admission storeUnavailable(
      RecordId id, StoreUnavailableException e, ExecutionPolicy policy) {
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

  private <T> ExecutionResult<T> run(
      Lease lease,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      Operation<T> operation) {
    RecordId id = RecordId.of(lease.scope(), lease.key());
    long start = System.nanoTime();
    T value;
    try {
      value = operation.run(lease);
    } catch (Throwable error) {
      ErrorVerdict verdict = ErrorVerdict.of(id, classifier, error);
      Recording recording = verdict.finish(lease);
      Error bug = verdict.bug();
      if (bug != null) {
        throw bug;
      }
      if (verdict.failure() == null) {
        if (verdict.finish() == Finish.RELEASE) {
          events.executed(id, Outcome.TRANSIENT, recording, System.nanoTime() - start);
        }
        throw propagate(error);
      }
      events.executed(id, Outcome.FAILED_FINAL, recording, System.nanoTime() - start);
      return new ExecutionResult.Failed<>(verdict.failure());
    }
    ValueVerdict verdict = ValueVerdict.of(id, codec, classifier, value);
    Recording recording = verdict.finish(lease);
    events.executed(id, verdict.outcome(), recording, System.nanoTime() - start);
    Error bug = verdict.bug();
    if (bug != null) {
      throw bug;
    }
    return new ExecutionResult.Executed<>(value, verdict.outcome(), recording);
  }

  /**
   * {@link #execute}, for an operation that answers with a stage: the claim ({@link #beginAsync}),
   * the wait for the operation's stage and the record ({@link Lease#completeAsync} …) hold no
   * thread. The stage's value or failure is classified, recorded, released or abandoned by the same
   * rules as {@link #execute}'s; a transient failure completes the returned stage exceptionally
   * with the operation's own exception, after the release.
   *
   * <p>The operation is called on the thread that completes the claim: the caller's when the store
   * answers at once (in memory), else a thread of the store's client or of the engine's store
   * executor. Keep its synchronous part short, or start the work on an executor of its own.
   */
  public <T> CompletionStage<ExecutionResult<T>> executeAsync(
      Scope scope,
      IdempotencyKey key,
      Fingerprint fingerprint,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      ExecutionPolicy policy,
      Operation<? extends CompletionStage<T>> operation) {
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(classifier, "classifier");
    Objects.requireNonNull(operation, "operation");
    return beginAsync(scope, key, fingerprint, policy)
        .thenCompose(
            admission ->
                admission.accept(
                    new Admission.Visitor<CompletionStage<ExecutionResult<T>>>() {
                      @Override
                      public CompletionStage<ExecutionResult<T>> proceed(Admission.Proceed p) {
                        return runAsync(p.lease(), codec, classifier, operation);
                      }

                      @Override
                      public CompletionStage<ExecutionResult<T>> unguarded(
                          Admission.Unguarded unguarded) {
                        return runUnguardedAsync(scope, key, classifier, operation);
                      }

                      @Override
                      public CompletionStage<ExecutionResult<T>> replay(Admission.Replay replay) {
                        return done(decode(RecordId.of(scope, key), replay, codec));
                      }

                      @Override
                      public CompletionStage<ExecutionResult<T>> replayFailure(
                          Admission.ReplayFailure replayFailure) {
                        return done(new ExecutionResult.Failed<>(replayFailure.failure()));
                      }

                      @Override
                      public CompletionStage<ExecutionResult<T>> inFlight(
                          Admission.InFlight inFlight) {
                        return done(new ExecutionResult.InFlight<>(inFlight.retryAfter()));
                      }

                      @Override
                      public CompletionStage<ExecutionResult<T>> fingerprintMismatch(
                          Admission.FingerprintMismatch mismatch) {
                        return done(new ExecutionResult.FingerprintMismatch<>());
                      }

                      @Override
                      public CompletionStage<ExecutionResult<T>> responseUnavailable(
                          Admission.ResponseUnavailable unavailable) {
                        return done(new ExecutionResult.ResponseUnavailable<>());
                      }

                      @Override
                      public CompletionStage<ExecutionResult<T>> storeUnavailable(
                          Admission.StoreUnavailable unavailable) {
                        return done(
                            new ExecutionResult.StoreUnavailable<>(
                                unavailable.retryAfter(), unavailable.cause()));
                      }
                    }));
  }

  private static <T> CompletionStage<ExecutionResult<T>> done(ExecutionResult<T> result) {
    return CompletableFuture.completedFuture(result);
  }

  private <T> CompletionStage<ExecutionResult<T>> runAsync(
      Lease lease,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      Operation<? extends CompletionStage<T>> operation) {
    RecordId id = RecordId.of(lease.scope(), lease.key());
    long start = System.nanoTime();
    CompletionStage<T> stage;
    try {
      stage = Objects.requireNonNull(operation.run(lease), "the operation returned no stage");
    } catch (Throwable error) {
      return failedAsync(lease, id, start, classifier, error);
    }
    return stage
        .<CompletionStage<ExecutionResult<T>>>handle(
            (value, failure) ->
                failure != null
                    ? failedAsync(lease, id, start, classifier, Causes.of(failure))
                    : succeededAsync(lease, id, start, codec, classifier, value))
        .thenCompose(result -> result);
  }

  private <T> CompletionStage<ExecutionResult<T>> succeededAsync(
      Lease lease,
      RecordId id,
      long start,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      T value) {
    ValueVerdict verdict = ValueVerdict.of(id, codec, classifier, value);
    return verdict
        .finishAsync(lease)
        .thenApply(
            recording -> {
              events.executed(id, verdict.outcome(), recording, System.nanoTime() - start);
              Error bug = verdict.bug();
              if (bug != null) {
                throw bug;
              }
              return new ExecutionResult.Executed<>(value, verdict.outcome(), recording);
            });
  }

  private <T> CompletionStage<ExecutionResult<T>> failedAsync(
      Lease lease,
      RecordId id,
      long start,
      OutcomeClassifier<? super T> classifier,
      Throwable error) {
    ErrorVerdict verdict = ErrorVerdict.of(id, classifier, error);
    return verdict
        .finishAsync(lease)
        .thenApply(
            recording -> {
              Error bug = verdict.bug();
              if (bug != null) {
                throw bug;
              }
              FinalFailure failure = verdict.failure();
              if (failure == null) {
                if (verdict.finish() == Finish.RELEASE) {
                  events.executed(id, Outcome.TRANSIENT, recording, System.nanoTime() - start);
                }
                if (error instanceof InterruptedException) {
                  Thread.currentThread().interrupt();
                }
                throw new java.util.concurrent.CompletionException(error);
              }
              events.executed(id, Outcome.FAILED_FINAL, recording, System.nanoTime() - start);
              return new ExecutionResult.Failed<>(failure);
            });
  }

  private <T> CompletionStage<ExecutionResult<T>> runUnguardedAsync(
      Scope scope,
      IdempotencyKey key,
      OutcomeClassifier<? super T> classifier,
      Operation<? extends CompletionStage<T>> operation) {
    CompletionStage<T> stage;
    try {
      stage =
          Objects.requireNonNull(
              operation.run(new UnguardedContext(scope, key)), "the operation returned no stage");
    } catch (Throwable error) {
      stage = CompletableFuture.failedFuture(error);
    }
    return stage.handle(
        (value, failure) -> {
          if (failure == null) {
            return new ExecutionResult.Executed<>(
                value, unguardedOutcome(scope, key, classifier, value), Recording.UNGUARDED);
          }
          Throwable error = Causes.of(failure);
          if (OutcomeClassifier.outcomeOfError(classifier, error) == Outcome.TRANSIENT) {
            throw new java.util.concurrent.CompletionException(error);
          }
          return new ExecutionResult.Failed<>(ErrorVerdict.finalFailureOf(error));
        });
  }

  /** How a lease is finished: the one rule {@link #execute} and {@link #executeAsync} apply. */
  private enum Finish {
    COMPLETE,
    FAIL_FINAL,
    WITHOUT_RESULT,
    RELEASE,
    ABANDON
  }

  /**
   * What a value the operation returned becomes: classified, then recorded for replay (a transient
   * one releases the key).
   *
   * @param outcome what the caller is told the value was
   * @param bytes the encoded value, for {@link Finish#COMPLETE} and {@link Finish#FAIL_FINAL}
   */
  private record ValueVerdict(Outcome outcome, Finish finish, byte[] bytes, @Nullable Error bug) {

    private static final byte[] NONE = new byte[0];

    ValueVerdict(Outcome outcome, Finish finish, byte[] bytes) {
      this(outcome, finish, bytes, null);
    }

    static <T> ValueVerdict of(
        RecordId id, ResultCodec<T> codec, OutcomeClassifier<? super T> classifier, T value) {
      Outcome outcome;
      try {
        outcome =
            Objects.requireNonNull(classifier.classify(value), "the classifier returned null");
      } catch (RuntimeException | Error e) {
        // The operation returned, so its effect happened: record it as done without a result, as
        // for a codec failure, so a retry never runs it again; the bug is logged, not rethrown,
        // because the caller's work did succeed. An Error (an AssertionError, an
        // OutOfMemoryError) is rethrown, but only once the lease is finished.
        log.error(
            "the classifier failed on the result of {}; recording it as done without a result",
            id,
            e);
        return new ValueVerdict(
            Outcome.COMPLETED, Finish.WITHOUT_RESULT, NONE, e instanceof Error err ? err : null);
      }
      if (outcome == Outcome.TRANSIENT) {
        return new ValueVerdict(outcome, Finish.RELEASE, NONE);
      }
      byte[] bytes;
      try {
        bytes = Objects.requireNonNull(codec.encode(value), "the codec encoded a value as null");
      } catch (RuntimeException | Error e) {
        // The work is done; it must not run again just because its result cannot be encoded.
        log.warn(
            "could not encode the result of {}; retries will get 'response unavailable'", id, e);
        return new ValueVerdict(
            outcome, Finish.WITHOUT_RESULT, NONE, e instanceof Error err ? err : null);
      }
      return new ValueVerdict(
          outcome, outcome == Outcome.COMPLETED ? Finish.COMPLETE : Finish.FAIL_FINAL, bytes);
    }

    Recording finish(Lease lease) {
      return switch (finish) {
        case COMPLETE -> lease.complete(bytes);
        case FAIL_FINAL -> lease.failFinal(bytes);
        case WITHOUT_RESULT -> lease.completeWithoutResult();
        case RELEASE -> lease.giveBack();
        case ABANDON -> throw new IllegalStateException("a returned value is never abandoned");
      };
    }

    CompletionStage<Recording> finishAsync(Lease lease) {
      return switch (finish) {
        case COMPLETE -> lease.completeAsync(bytes);
        case FAIL_FINAL -> lease.failFinalAsync(bytes);
        case WITHOUT_RESULT -> lease.completeWithoutResultAsync();
        case RELEASE -> lease.giveBackAsync();
        case ABANDON -> throw new IllegalStateException("a returned value is never abandoned");
      };
    }
  }

  /**
   * What an exception from the operation becomes: a final failure to record and replay, or a
   * transient one (the key is released and the exception propagates); if the classifier itself
   * fails, whether the operation's effect happened before it threw is unknown, so the key is
   * neither released (a retry could repeat the effect) nor recorded: it is abandoned to its lease.
   *
   * @param outcome {@link Outcome#FAILED_FINAL} or {@link Outcome#TRANSIENT} (also for {@link
   *     Finish#ABANDON}, where the error propagates as a transient one would, but no execution is
   *     reported)
   * @param failure what is recorded and returned, for {@link Outcome#FAILED_FINAL} only
   */
  private record ErrorVerdict(
      Outcome outcome, Finish finish, @Nullable FinalFailure failure, @Nullable Error bug) {

    ErrorVerdict(Outcome outcome, Finish finish, @Nullable FinalFailure failure) {
      this(outcome, finish, failure, null);
    }

    static ErrorVerdict of(RecordId id, OutcomeClassifier<?> classifier, Throwable error) {
      Outcome outcome;
      try {
        outcome = OutcomeClassifier.outcomeOfError(classifier, error);
      } catch (RuntimeException | Error bug) {
        if (bug != error) {
          error.addSuppressed(bug);
        }
        log.error("the classifier failed on an error from {}; abandoning the lease", id, bug);
        return new ErrorVerdict(
            Outcome.TRANSIENT, Finish.ABANDON, null, bug instanceof Error err ? err : null);
      }
      if (outcome == Outcome.TRANSIENT) {
        return new ErrorVerdict(outcome, Finish.RELEASE, null);
      }
      return new ErrorVerdict(outcome, Finish.FAIL_FINAL, finalFailureOf(error));
    }

    static FinalFailure finalFailureOf(Throwable error) {
      return error instanceof FinalFailure f
          ? f
          : new FinalFailure(error.getClass().getName(), error.getMessage());
    }

    /** Finishes the lease; {@link Recording#UNKNOWN} for an abandoned one. */
    Recording finish(Lease lease) {
      return switch (finish) {
        case FAIL_FINAL -> lease.failFinal(Objects.requireNonNull(failure, "a final failure"));
        case RELEASE -> lease.giveBack();
        case ABANDON -> {
          lease.abandon();
          yield Recording.UNKNOWN;
        }
        case COMPLETE, WITHOUT_RESULT ->
            throw new IllegalStateException("an exception is never recorded as a success");
      };
    }

    CompletionStage<Recording> finishAsync(Lease lease) {
      return switch (finish) {
        case FAIL_FINAL -> lease.failFinalAsync(Objects.requireNonNull(failure, "a final failure"));
        case RELEASE -> lease.giveBackAsync();
        case ABANDON -> {
          lease.abandon();
          yield CompletableFuture.completedFuture(Recording.UNKNOWN);
        }
        case COMPLETE, WITHOUT_RESULT ->
            throw new IllegalStateException("an exception is never recorded as a success");
      };
    }
  }

  private static RuntimeException propagate(Throwable error) {
    if (error instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    if (error instanceof RuntimeException r) {
      return r;
    }
    if (error instanceof Error e) {
      throw e;
    }
    return new OperationFailedException(error);
  }

  private <T> ExecutionResult<T> decode(
      RecordId id, Admission.Replay replay, ResultCodec<T> codec) {
    try {
      return new ExecutionResult.Replayed<>(codec.decode(replay.value()), replay.outcome());
    } catch (RuntimeException e) {
      log.warn(
          "could not decode the recorded result of {}; answering 'response unavailable'", id, e);
      return new ExecutionResult.ResponseUnavailable<>();
    }
  }

  private <T> ExecutionResult<T> runUnguarded(
      Scope scope,
      IdempotencyKey key,
      OutcomeClassifier<? super T> classifier,
      Operation<T> operation) {
    UnguardedContext context = new UnguardedContext(scope, key);
    T value;
    try {
      value = operation.run(context);
    } catch (Throwable error) {
      if (OutcomeClassifier.outcomeOfError(classifier, error) == Outcome.TRANSIENT) {
        throw propagate(error);
      }
      return new ExecutionResult.Failed<>(ErrorVerdict.finalFailureOf(error));
    }
    return new ExecutionResult.Executed<>(
        value, unguardedOutcome(scope, key, classifier, value), Recording.UNGUARDED);
  }

  /**
   * The classifier's verdict on the value of an unguarded run. If the classifier throws, the work
   * still happened: it counts as completed, and the bug is logged, not thrown at a caller whose
   * operation succeeded.
   */
  private static <T> Outcome unguardedOutcome(
      Scope scope, IdempotencyKey key, OutcomeClassifier<? super T> classifier, T value) {
    try {
      return Objects.requireNonNull(classifier.classify(value), "the classifier returned null");
    } catch (RuntimeException e) {
      log.error(
          "the classifier failed on the result of {} (run unguarded); counting it as completed",
          RecordId.of(scope, key),
          e);
      return Outcome.COMPLETED;
    }
  }

  /** The lease's remaining time by the store's clock, rounded up to whole seconds, at least one. */
  private static Duration retryAfter(IdempotencyRecord record) {
    long millis = record.leaseRemaining().toMillis();
    return Duration.ofSeconds(Math.max(1, (millis + 999) / 1000));
  }

  /**
   * Stops the engine's heartbeats; leases still held stop being extended. Later calls to {@link
   * #begin} and {@link #execute} throw {@link IllegalStateException} before claiming anything.
   * Never closes the store or a scheduler the engine was given.
   */
  @Override
  public void close() {
    closed = true;
    if (ownExecutor != null) {
      // Calls under way finish (a lease being recorded is recorded) while the leases are still
      // kept alive, for a bounded time; no new ones start on it, and a lease finished later
      // writes on a thread of its own (FinishingExecutor).
      ownExecutor.shutdown();
      try {
        if (!ownExecutor.awaitTermination(CLOSE_DRAIN.toNanos(), TimeUnit.NANOSECONDS)) {
          log.warn("store calls still under way {} after close; not waiting for them", CLOSE_DRAIN);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    heartbeats.close();
  }

  /**
   * Carries a lease won by a claim while the engine closed, from where the claim is answered to the
   * caller that releases it: blocking, or asynchronously without blocking the store's thread.
   */
  private static final class ClosedWhileClaiming extends RuntimeException {
    private static final long serialVersionUID = 1L;

    @SuppressWarnings("serial") // never serialised: it never leaves this class
    private final transient HeldLease lease;

    private final IllegalStateException reason;

    ClosedWhileClaiming(HeldLease lease, IllegalStateException reason) {
      super(reason.getMessage(), reason, false, false);
      this.lease = lease;
      this.reason = reason;
    }
  }

  /** Builds a {@link Once}. */
  public static final class Builder {
    /** The default of {@link #storeThreads}. */
    public static final int DEFAULT_STORE_THREADS = 16;

    /** The largest {@link #storeThreads} accepted. */
    public static final int MAX_STORE_THREADS = 1024;

    private final IdempotencyStore store;
    private ExecutionPolicy defaults = ExecutionPolicy.DEFAULTS;
    private OnceListener listener = OnceListener.NONE;
    private @Nullable ScheduledExecutorService scheduler;
    private int heartbeatThreads = 4;
    private int heartbeatBatchSize = 5_000;
    private @Nullable Executor storeExecutor;
    private int storeThreads = DEFAULT_STORE_THREADS;

    private Builder(IdempotencyStore store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    /** The policy for calls that name none. */
    public Builder defaults(ExecutionPolicy defaults) {
      this.defaults = Objects.requireNonNull(defaults, "defaults");
      return this;
    }

    /** Receives events and store timings. */
    public Builder listener(OnceListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Times heartbeats on this scheduler instead of the engine's own daemon thread; the engine
     * never shuts it down, and refuses new work once it is shut down. The store calls themselves
     * run on the engine's heartbeat threads, never on the scheduler.
     */
    public Builder heartbeatScheduler(ScheduledExecutorService scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * How many heartbeat store calls may be under way at once (default 4, 1 to 256). The leases due
     * at a tick are spread over them, each call extending up to {@link #heartbeatBatchSize} leases,
     * so with the defaults one round trip extends up to 20,000 leases; raise it for a slow store
     * with more leases than that, of a few seconds each.
     */
    public Builder heartbeatThreads(int threads) {
      this.heartbeatThreads = Arguments.between("heartbeatThreads", threads, 1, 256);
      return this;
    }

    /**
     * The most leases one heartbeat store call extends (default 5,000, 1 to 100,000). Stores split
     * a batch further where their protocol needs it.
     */
    public Builder heartbeatBatchSize(int batchSize) {
      this.heartbeatBatchSize = Arguments.between("heartbeatBatchSize", batchSize, 1, 100_000);
      return this;
    }

    /**
     * Runs the asynchronous calls ({@link Once#beginAsync}, {@link Lease#completeAsync} …) of a
     * store whose client is blocking (JDBC, SQLite) on this executor instead of the engine's own
     * pool of {@link #storeThreads} threads. It should be bounded: a call it refuses is answered as
     * the store being unavailable. The engine never shuts it down. Stores with an asynchronous
     * client (Redis, in memory) do not use it.
     */
    public Builder storeExecutor(Executor executor) {
      this.storeExecutor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * The size of the engine's own store executor (default {@value #DEFAULT_STORE_THREADS}, 1 to
     * {@value #MAX_STORE_THREADS}), used when no {@link #storeExecutor} is given: at most this many
     * blocking store calls of asynchronous callers run at once, and up to {@value
     * StoreExecutor#QUEUE_PER_THREAD} per thread wait for one.
     */
    public Builder storeThreads(int threads) {
      this.storeThreads = Arguments.between("storeThreads", threads, 1, MAX_STORE_THREADS);
      return this;
    }

    public Once build() {
      return new Once(this);
    }
  }
}

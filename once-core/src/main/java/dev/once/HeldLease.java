package dev.once;

import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.ResultTooLargeException;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The engine's {@link Lease}: heartbeats while held, and fences every write by its token. */
final class HeldLease implements Lease {

  private static final Logger log = LoggerFactory.getLogger(HeldLease.class);

  /** What a release passes as its payload: it writes none. */
  private static final byte[] NO_PAYLOAD = new byte[0];

  /**
   * When a finishing write is tried, and tried again while the store fails: the record must not be
   * left behind.
   */
  private static final long[] FINISH_BACKOFF_MILLIS = {0, 25, 100, 400};

  private final IdempotencyStore store;
  private final Events events;
  private final RecordId id;
  private final long token;
  private final LeaseToken leaseToken;
  private final boolean stolen;
  private final byte @Nullable [] recoveryPoint;
  private final ExecutionPolicy policy;
  private final @Nullable Heartbeats heartbeats;
  private final Executor blocking;
  private final @Nullable Batcher<Finish, Boolean> finishes;
  private final AtomicBoolean finished = new AtomicBoolean();

  /**
   * The beat under way for this lease, completed when it ends; null when none is. A lease that is
   * finished starts no beat, and its give-back waits for the one under way: a beat that reached the
   * store after an {@link IdempotencyStore#endLease} would extend the ended lease again (same
   * token, record kept), and the hand-over would wait a whole lease.
   */
  private final AtomicReference<@Nullable CompletableFuture<Void>> beat = new AtomicReference<>();

  private volatile boolean lost;

  /**
   * Set by the first checkpoint, whether or not the store kept it: the steps before it had their
   * effects.
   */
  private volatile boolean checkpointed;

  /**
   * When the last extension that succeeded was sent (or the claim, before any), by {@link
   * System#nanoTime()}.
   */
  private volatile long extendedAt;

  /**
   * @param claimedAt when the claim that granted the lease was sent, by {@link System#nanoTime()}:
   *     the store started the lease no earlier, so the local deadline is never later than the
   *     store's
   * @param heartbeats keeps the lease alive until it is finished, or null if the policy has no
   *     heartbeat
   * @param blocking where the asynchronous finishing calls of a blocking store run
   * @param finishes gathers the finishing writes of concurrent leases into batches, or null where
   *     the store does not batch
   */
  HeldLease(
      IdempotencyStore store,
      Events events,
      RecordId id,
      long token,
      boolean stolen,
      byte @Nullable [] recoveryPoint,
      ExecutionPolicy policy,
      long claimedAt,
      @Nullable Heartbeats heartbeats,
      Executor blocking,
      @Nullable Batcher<Finish, Boolean> finishes) {
    this.store = store;
    this.events = events;
    this.id = id;
    this.token = token;
    this.leaseToken = new LeaseToken(id, token);
    this.stolen = stolen;
    this.recoveryPoint = recoveryPoint;
    this.policy = policy;
    this.extendedAt = claimedAt;
    this.heartbeats = heartbeats;
    this.blocking = blocking;
    this.finishes = finishes;
  }

  // ---------------------------------------------------------------- for Heartbeats

  Duration leaseLength() {
    return policy.lease();
  }

  LeaseToken leaseToken() {
    return leaseToken;
  }

  /**
   * Whether the local deadline (the last extension sent, plus the lease) has passed at {@code now}.
   */
  boolean deadlinePassed(long now) {
    return now - (extendedAt + policy.lease().toNanos()) >= 0;
  }

  /** Whether the last extension was sent at least {@code minGapNanos} before {@code now}. */
  boolean dueForBeat(long now, long minGapNanos) {
    return now - extendedAt >= minGapNanos;
  }

  /**
   * Marks a beat under way; false if one already is (a slow store), so no second one piles on, or
   * if the lease is finished. Marked before {@code finished} is read, and {@link #beginFinish} sets
   * it before {@link #beatsOver} reads the mark: either this beat sees the lease finished, or the
   * finish sees this beat and waits for it.
   */
  boolean startBeat() {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    if (!beat.compareAndSet(null, mine)) {
      return false;
    }
    if (finished.get()) {
      endBeat();
      return false;
    }
    return true;
  }

  void endBeat() {
    CompletableFuture<Void> ended = beat.getAndSet(null);
    if (ended != null) {
      ended.complete(null);
    }
  }

  /** Completes once no beat of this lease is under way; called once it is finished. */
  private CompletableFuture<Void> beatsOver() {
    CompletableFuture<Void> underWay = beat.get();
    return underWay == null ? CompletableFuture.completedFuture(null) : underWay;
  }

  /** The store extended the lease by a call sent at {@code sent}. */
  void extendedAt(long sent) {
    if (sent - extendedAt > 0) {
      extendedAt = sent;
    }
  }

  /**
   * The store refused to extend the lease: taken over, unless this holder finished it meanwhile.
   */
  void refused() {
    if (!finished.get()) {
      markLost("was taken over");
    }
  }

  /** The local deadline passed without an extension (a partition longer than the lease). */
  void lapsedLocally() {
    if (!finished.get()) {
      markLost("lapsed: no heartbeat reached the store within " + policy.lease());
    }
  }

  private void stopHeartbeat() {
    if (heartbeats != null) {
      heartbeats.unregister(this);
    }
  }

  private void markLost(String why) {
    if (!lost) {
      lost = true;
      stopHeartbeat();
      log.warn(
          "lease on {} with token {} {}; this worker's writes will be rejected unless the store still holds it",
          id,
          token,
          why);
      events.leaseLost(id, token);
    }
  }

  @Override
  public Scope scope() {
    return id.scope();
  }

  @Override
  public IdempotencyKey key() {
    return id.key();
  }

  @Override
  public long token() {
    return token;
  }

  @Override
  public boolean stolen() {
    return stolen;
  }

  @Override
  public Optional<byte[]> recoveryPoint() {
    return Optional.ofNullable(recoveryPoint);
  }

  @Override
  public void checkpoint(byte[] point) {
    if (point == null) {
      throw new IllegalArgumentException("recovery point must not be null");
    }
    if (finished.get()) {
      throw new IllegalStateException("lease on " + id + " is already finished");
    }
    checkpointed = true;
    long sent = System.nanoTime();
    if (lost || !store.checkpoint(id, token, point, policy.lease())) {
      markLost("was taken over");
      throw new LeaseLostException("lease on " + id + " with token " + token + " was taken over");
    }
    extendedAt(sent);
  }

  /**
   * True once the lease was taken over, or once its local deadline passed: the last heartbeat that
   * reached the store was sent a whole lease ago, so the store may have granted the key to another
   * worker whatever it says later. Finishing writes are still tried, fenced by the store.
   */
  @Override
  public boolean leaseLost() {
    return lost || deadlinePassed(System.nanoTime());
  }

  @Override
  public Recording complete(byte[] value) {
    if (value.length > policy.maxResultBytes()) {
      return completeWithoutResult();
    }
    return finish(Finish.Kind.COMPLETE, Payloads.value(value));
  }

  @Override
  public Recording failFinal(byte[] value) {
    if (value.length > policy.maxResultBytes()) {
      return notStored(finish(Finish.Kind.FAIL_FINAL, Payloads.notStored()));
    }
    return finish(Finish.Kind.FAIL_FINAL, Payloads.value(value));
  }

  @Override
  public Recording failFinal(FinalFailure failure) {
    byte[] payload = Payloads.failure(failure);
    if (payload.length > policy.maxResultBytes()) {
      return notStored(finish(Finish.Kind.FAIL_FINAL, Payloads.notStored()));
    }
    return finish(Finish.Kind.FAIL_FINAL, payload);
  }

  @Override
  public Recording completeWithoutResult() {
    return notStored(finish(Finish.Kind.COMPLETE, Payloads.notStored()));
  }

  private static Recording notStored(Recording r) {
    return r == Recording.RECORDED ? Recording.RESULT_NOT_STORED : r;
  }

  @Override
  public Recording release() {
    return finish(Finish.Kind.RELEASE, NO_PAYLOAD);
  }

  @Override
  public CompletionStage<Recording> completeAsync(byte[] value) {
    if (value.length > policy.maxResultBytes()) {
      return completeWithoutResultAsync();
    }
    return finishAsync(Finish.Kind.COMPLETE, Payloads.value(value));
  }

  @Override
  public CompletionStage<Recording> failFinalAsync(byte[] value) {
    if (value.length > policy.maxResultBytes()) {
      return finishAsync(Finish.Kind.FAIL_FINAL, Payloads.notStored())
          .thenApply(HeldLease::notStored);
    }
    return finishAsync(Finish.Kind.FAIL_FINAL, Payloads.value(value));
  }

  @Override
  public CompletionStage<Recording> failFinalAsync(FinalFailure failure) {
    byte[] payload = Payloads.failure(failure);
    if (payload.length > policy.maxResultBytes()) {
      return finishAsync(Finish.Kind.FAIL_FINAL, Payloads.notStored())
          .thenApply(HeldLease::notStored);
    }
    return finishAsync(Finish.Kind.FAIL_FINAL, payload);
  }

  @Override
  public CompletionStage<Recording> completeWithoutResultAsync() {
    return finishAsync(Finish.Kind.COMPLETE, Payloads.notStored()).thenApply(HeldLease::notStored);
  }

  @Override
  public CompletionStage<Recording> releaseAsync() {
    return finishAsync(Finish.Kind.RELEASE, NO_PAYLOAD);
  }

  @Override
  public void abandon() {
    beginFinish();
    stopHeartbeat();
  }

  @Override
  public Recording giveBack() {
    if (mayHaveHadAnEffect()) {
      abandon();
      try {
        // A beat under way is bounded by the store's own timeout; a lease's length is plenty.
        beatsOver().get(policy.lease().toNanos(), TimeUnit.NANOSECONDS);
        store.endLease(id, token);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | TimeoutException e) {
        // The beat never ended: the lease ends by itself, as without a hand-over.
        handOverFailed(e);
      } catch (RuntimeException e) {
        handOverFailed(e);
      }
      return Recording.UNKNOWN;
    }
    return release();
  }

  @Override
  public CompletionStage<Recording> giveBackAsync() {
    if (mayHaveHadAnEffect()) {
      try {
        abandon();
      } catch (IllegalStateException e) {
        return CompletableFuture.failedFuture(e);
      }
      CompletionStage<Boolean> handedOver =
          beatsOver()
              .thenCompose(
                  over -> {
                    try {
                      return store.endLeaseAsync(id, token, blocking);
                    } catch (RuntimeException e) {
                      return CompletableFuture.failedFuture(e);
                    }
                  });
      return handedOver.handle(
          (ended, failure) -> {
            if (failure != null) {
              handOverFailed(failure);
            }
            return Recording.UNKNOWN;
          });
    }
    return releaseAsync();
  }

  /**
   * The hand-over is a courtesy to the next claim: without it the lease ends by itself. A store
   * that is down says so often enough elsewhere; anything else is a bug worth seeing.
   */
  private void handOverFailed(Throwable failure) {
    Throwable cause = Causes.of(failure);
    if (cause instanceof StoreUnavailableException) {
      log.debug("could not end the lease on {} early; the next claim waits for it", id, cause);
    } else {
      log.warn("could not end the lease on {} early; the next claim waits for it", id, cause);
    }
  }

  /**
   * Whether work under this key may have had an effect although the attempt that gives it back had
   * none: the lease was stolen (its holder before may have had its effect), or its holder
   * checkpointed (the steps before the checkpoint did).
   */
  private boolean mayHaveHadAnEffect() {
    return stolen || checkpointed;
  }

  private void beginFinish() {
    if (!finished.compareAndSet(false, true)) {
      throw new IllegalStateException("lease on " + id + " is already finished");
    }
  }

  private Recording finish(Finish.Kind write, byte[] payload) {
    beginFinish();
    stopHeartbeat();
    return write(write, payload);
  }

  private Recording write(Finish.Kind write, byte[] payload) {
    StoreUnavailableException failure = null;
    for (int attempt = 0; attempt < FINISH_BACKOFF_MILLIS.length; attempt++) {
      if (!sleep(FINISH_BACKOFF_MILLIS[attempt])) {
        break;
      }
      try {
        boolean applied;
        try {
          applied = apply(write, payload);
        } catch (ResultTooLargeException e) {
          if (payload == Payloads.notStored()) {
            throw e; // a store that cannot keep one byte is broken; say so
          }
          // Refused before anything was written: record the outcome without its result, so the
          // operation still counts as done instead of leaving a record a thief could re-run.
          log.warn(
              "the store cannot keep the result of {} ({}); recording the outcome without it",
              id,
              e.getMessage());
          return notStored(write(write, Payloads.notStored()));
        }
        if (applied || (failure != null && alreadyApplied(write))) {
          // Applied now, or by an earlier attempt that reached the store although its answer was
          // lost.
          return written(write);
        }
        return lostToAnother();
      } catch (StoreUnavailableException e) {
        failure = e;
      }
    }
    log.warn(
        "could not record the outcome of {} (token {}); the record stays in progress until its lease ends",
        id,
        token,
        failure);
    return Recording.UNKNOWN;
  }

  private CompletionStage<Recording> finishAsync(Finish.Kind write, byte[] payload) {
    try {
      beginFinish();
    } catch (IllegalStateException e) {
      return CompletableFuture.failedFuture(e);
    }
    stopHeartbeat();
    return writeAsync(write, payload, 0, null);
  }

  /**
   * {@link #write}, one attempt per stage: the same backoff, the same fallback for a result the
   * store cannot keep, the same check that an attempt whose answer was lost did land, and no thread
   * held.
   */
  private CompletionStage<Recording> writeAsync(
      Finish.Kind write, byte[] payload, int attempt, @Nullable StoreUnavailableException failure) {
    if (attempt == FINISH_BACKOFF_MILLIS.length) {
      log.warn(
          "could not record the outcome of {} (token {}); the record stays in progress until its lease ends",
          id,
          token,
          failure);
      return CompletableFuture.completedFuture(Recording.UNKNOWN);
    }
    return after(FINISH_BACKOFF_MILLIS[attempt])
        .thenCompose(v -> applyAsync(write, payload))
        .handle(
            (applied, error) -> {
              Throwable cause = error == null ? null : Causes.of(error);
              if (cause == null) {
                if (applied) {
                  return CompletableFuture.completedFuture(written(write));
                }
                if (failure == null) {
                  return CompletableFuture.completedFuture(lostToAnother());
                }
                return store
                    .getAsync(id, blocking)
                    .handle(
                        (now, e) ->
                            e == null && alreadyApplied(write, now)
                                ? written(write)
                                : lostToAnother());
              }
              if (cause instanceof ResultTooLargeException e) {
                if (payload == Payloads.notStored()) {
                  return CompletableFuture.<Recording>failedFuture(e);
                }
                log.warn(
                    "the store cannot keep the result of {} ({}); recording the outcome without it",
                    id,
                    e.getMessage());
                return writeAsync(write, Payloads.notStored(), 0, null)
                    .thenApply(HeldLease::notStored);
              }
              if (cause instanceof StoreUnavailableException e) {
                return writeAsync(write, payload, attempt + 1, e);
              }
              return CompletableFuture.<Recording>failedFuture(cause);
            })
        .thenCompose(stage -> stage);
  }

  private static CompletionStage<Void> after(long millis) {
    return millis == 0
        ? CompletableFuture.completedFuture(null)
        : CompletableFuture.runAsync(
            () -> {}, CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS));
  }

  private static Recording written(Finish.Kind write) {
    return write == Finish.Kind.RELEASE ? Recording.RELEASED : Recording.RECORDED;
  }

  private Recording lostToAnother() {
    markLost("was taken over");
    return Recording.LEASE_LOST;
  }

  private boolean alreadyApplied(Finish.Kind write) {
    try {
      return alreadyApplied(write, store.get(id));
    } catch (StoreUnavailableException e) {
      return false;
    }
  }

  /** Whether the record as it is {@code now} shows that this lease's write landed. */
  private boolean alreadyApplied(Finish.Kind write, Optional<IdempotencyRecord> now) {
    if (write == Finish.Kind.RELEASE) {
      return now.isEmpty() || now.get().token() > token;
    }
    return now.isPresent()
        && now.get().token() == token
        && now.get().state() != RecordState.IN_PROGRESS;
  }

  private static boolean sleep(long millis) {
    if (millis == 0) {
      return true;
    }
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** One fenced write, gathered with other leases' writes where the store batches. */
  private boolean apply(Finish.Kind kind, byte[] payload) {
    Finish finish = new Finish(kind, id, token, payload, policy.ttl());
    return finishes != null && store.batchesOnThisThread()
        ? finishes.call(finish)
        : finish.applyTo(store);
  }

  private CompletionStage<Boolean> applyAsync(Finish.Kind kind, byte[] payload) {
    Finish finish = new Finish(kind, id, token, payload, policy.ttl());
    return finishes != null && store.batchesOnThisThread()
        ? finishes.callAsync(finish)
        : finish.applyAsyncTo(store, blocking);
  }
}

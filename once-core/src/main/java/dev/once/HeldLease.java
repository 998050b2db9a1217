package dev.once;

import dev.once.store.Finish;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
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

  /**
   * Ends once no beat of this lease is under way; called once it is finished. Blocking, it waits a
   * lease's length at most: a beat under way is bounded by the store's own timeout, and one that
   * never ends leaves the lease to end by itself, as without a hand-over.
   */
  private Io<Boolean> beatsOver() {
    CompletableFuture<Void> underWay = beat.get();
    if (underWay == null) {
      return Io.of(() -> true, () -> CompletableFuture.completedFuture(true));
    }
    return Io.of(
        () -> {
          underWay.get(policy.lease().toNanos(), TimeUnit.NANOSECONDS);
          return true;
        },
        () -> underWay.thenApply(over -> true));
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
    return Step.block(completing(value));
  }

  @Override
  public Recording failFinal(byte[] value) {
    return Step.block(failingFinal(value));
  }

  @Override
  public Recording failFinal(FinalFailure failure) {
    return Step.block(failingFinal(failure));
  }

  @Override
  public Recording completeWithoutResult() {
    return Step.block(withoutResult());
  }

  @Override
  public Recording release() {
    return Step.block(finishing(Finish.Kind.RELEASE, NO_PAYLOAD));
  }

  @Override
  public Recording giveBack() {
    return Step.block(givingBack());
  }

  @Override
  public CompletionStage<Recording> completeAsync(byte[] value) {
    return Step.start(() -> completing(value));
  }

  @Override
  public CompletionStage<Recording> failFinalAsync(byte[] value) {
    return Step.start(() -> failingFinal(value));
  }

  @Override
  public CompletionStage<Recording> failFinalAsync(FinalFailure failure) {
    return Step.start(() -> failingFinal(failure));
  }

  @Override
  public CompletionStage<Recording> completeWithoutResultAsync() {
    return Step.start(this::withoutResult);
  }

  @Override
  public CompletionStage<Recording> releaseAsync() {
    return Step.start(() -> finishing(Finish.Kind.RELEASE, NO_PAYLOAD));
  }

  @Override
  public CompletionStage<Recording> giveBackAsync() {
    return Step.start(this::givingBack);
  }

  @Override
  public void abandon() {
    beginFinish();
    stopHeartbeat();
  }

  // ---------------------------------------------------------------- the finishing rules, as steps

  Step<Recording> completing(byte[] value) {
    if (value.length > policy.maxResultBytes()) {
      return withoutResult();
    }
    return finishing(Finish.Kind.COMPLETE, Payloads.value(value));
  }

  Step<Recording> failingFinal(byte[] value) {
    if (value.length > policy.maxResultBytes()) {
      return finishing(Finish.Kind.FAIL_FINAL, Payloads.notStored()).then(FencedWrite::notStored);
    }
    return finishing(Finish.Kind.FAIL_FINAL, Payloads.value(value));
  }

  Step<Recording> failingFinal(FinalFailure failure) {
    byte[] payload = Payloads.failure(failure);
    if (payload.length > policy.maxResultBytes()) {
      return finishing(Finish.Kind.FAIL_FINAL, Payloads.notStored()).then(FencedWrite::notStored);
    }
    return finishing(Finish.Kind.FAIL_FINAL, payload);
  }

  Step<Recording> withoutResult() {
    return finishing(Finish.Kind.COMPLETE, Payloads.notStored()).then(FencedWrite::notStored);
  }

  /**
   * {@link Lease#giveBack}: released where nothing under this key can have had an effect; else
   * abandoned, and handed over early by ending the lease once no beat is under way.
   */
  Step<Recording> givingBack() {
    if (!mayHaveHadAnEffect()) {
      return finishing(Finish.Kind.RELEASE, NO_PAYLOAD);
    }
    abandon();
    return Step.call(
        beatsOver(),
        over -> {
          if (over.failed()) {
            return handOverFailed(over.failure());
          }
          return Step.call(
              Io.of(
                  () -> store.endLease(id, token), () -> store.endLeaseAsync(id, token, blocking)),
              ended ->
                  ended.failed() ? handOverFailed(ended.failure()) : Step.done(Recording.UNKNOWN));
        });
  }

  /**
   * The hand-over is a courtesy to the next claim: without it the lease ends by itself. A store
   * that is down says so often enough elsewhere; anything else is a bug worth seeing.
   */
  private Step<Recording> handOverFailed(Throwable failure) {
    Throwable cause = Causes.of(failure);
    if (cause instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    } else if (cause instanceof StoreUnavailableException) {
      log.debug("could not end the lease on {} early; the next claim waits for it", id, cause);
    } else {
      log.warn("could not end the lease on {} early; the next claim waits for it", id, cause);
    }
    return Step.done(Recording.UNKNOWN);
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

  private Step<Recording> finishing(Finish.Kind write, byte[] payload) {
    beginFinish();
    stopHeartbeat();
    return new FencedWrite(
            store, finishes, blocking, id, token, policy.ttl(), () -> markLost("was taken over"))
        .writing(write, payload);
  }
}

package dev.once.tck;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import dev.once.store.UnreadableRecordException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A store decorator that injects the faults real stores show, for tests of anything built on a
 * store (the engine, an adapter, a consumer): latency, an outage, calls that hang until released,
 * and writes that land although their reply is lost. Faults are switched on and off while the store
 * is in use; every switch is thread-safe and takes effect for calls that start after it.
 *
 * <pre>{@code
 * FaultyStore store = FaultyStore.wrap(PostgresStore.builder(dataSource).build())
 *     .latency(Duration.ofMillis(50));          // every round trip takes 50 ms more
 * store.latency(Duration.ofMillis(200), Call.HEARTBEAT); // and heartbeats 200 ms
 * store.down(Call.HEARTBEAT);                   // heartbeats now fail with StoreUnavailableException
 * store.loseReplies(Call.COMPLETE);             // completions land, then fail as if the reply were lost
 * store.heal();                                 // every fault but the latency is gone
 * }</pre>
 *
 * <p>A batched heartbeat is one {@link Call#HEARTBEAT} call: it pays the latency once, as a real
 * round trip does. Waits are bounded: a paused call gives up after {@link #MAX_PAUSE} with {@link
 * StoreUnavailableException}, so a forgotten {@link #heal} fails a test instead of hanging it.
 */
public final class FaultyStore extends ForwardingStore {

  /** The longest a paused call waits before it fails. */
  public static final Duration MAX_PAUSE = Duration.ofSeconds(60);

  /** The store calls faults apply to. */
  public enum Call {
    CLAIM,
    GET,
    HEARTBEAT,
    CHECKPOINT,
    COMPLETE,
    FAIL_FINAL,
    RELEASE,
    /**
     * {@code endLease}: ending a lease early, the hand-over of a lease given back after work that
     * may have had an effect, or of a stolen claim nobody ran under ({@code giveBackUnused}).
     */
    END_LEASE,
    PURGE,
    /** {@code awaitChange}: subscribing to a record's changes (Redis's SUBSCRIBE). */
    WATCH;

    /** Every call that writes as a lease holder: what a lost reply applies to by default. */
    static final Set<Call> FENCED_WRITES =
        EnumSet.of(HEARTBEAT, CHECKPOINT, COMPLETE, FAIL_FINAL, RELEASE, END_LEASE);
  }

  private enum Fault {
    DOWN,
    LOSE_REPLY,
    PAUSE,
    UNREADABLE
  }

  private final IdempotencyStore delegate;
  private final Map<Call, AtomicInteger> calls = new EnumMap<>(Call.class);
  private final Map<Call, AtomicInteger> answered = new EnumMap<>(Call.class);
  private final Map<Call, Long> latencyNanos = new java.util.concurrent.ConcurrentHashMap<>();
  private volatile Map<Call, Fault> faults = Map.of();
  // Opened by every heal: a paused call wakes, and waits again on the next one while its call is
  // still paused (another call was healed). Swapped, never reset, under this object's lock.
  private volatile CountDownLatch healed = new CountDownLatch(1);
  private volatile boolean gathers;
  private final List<List<RecordId>> claimBatches = new CopyOnWriteArrayList<>();
  private final List<List<RecordId>> finishBatches = new CopyOnWriteArrayList<>();
  // How many claims (single or batch) under way carry each record: guarded by itself.
  private final Map<RecordId, Integer> claimsUnderWay = new java.util.HashMap<>();
  private final AtomicInteger claimsMeetingAnother = new AtomicInteger();

  private FaultyStore(IdempotencyStore delegate) {
    this.delegate = delegate;
    for (Call call : Call.values()) {
      calls.put(call, new AtomicInteger());
      answered.put(call, new AtomicInteger());
    }
  }

  /** Wraps the store with no fault switched on. */
  public static FaultyStore wrap(IdempotencyStore store) {
    return new FaultyStore(Objects.requireNonNull(store, "store"));
  }

  @Override
  protected IdempotencyStore delegate() {
    return delegate;
  }

  /**
   * Lets an engine gather its calls over this store as it would over the store itself ({@link
   * IdempotencyStore#batches()} passes through), and sends batch calls to the store's own batch
   * calls, each a single {@link Call#CLAIM} (or {@link Call#COMPLETE} for a finishing batch) that
   * pays the latency once and meets the faults once, as one round trip does. Without it a batch is
   * made of single calls, and an engine never gathers. Each batch's records are kept ({@link
   * #claimBatches()}), so a test can show that what it meant to gather did meet in one batch.
   */
  public FaultyStore gathering() {
    gathers = true;
    return this;
  }

  /** The records of every claim batch the store received, in order; with {@link #gathering()}. */
  public List<List<RecordId>> claimBatches() {
    return List.copyOf(claimBatches);
  }

  /** The records of every finishing batch the store received; with {@link #gathering()}. */
  public List<List<RecordId>> finishBatches() {
    return List.copyOf(finishBatches);
  }

  /**
   * How many claims, single or batch, reached the store while another carrying one of their records
   * was still under way. Claims that go side by side and share a key are where a store's own
   * concurrency decides who runs the work, so a herd test shows it met them.
   */
  public int claimsMeetingAnother() {
    return claimsMeetingAnother.get();
  }

  /**
   * These calls (all, if none are named) take this much longer, before they reach the store; zero
   * takes the latency away again.
   */
  public FaultyStore latency(Duration perCall, Call... which) {
    Objects.requireNonNull(perCall, "perCall");
    if (perCall.isNegative()) {
      throw new IllegalArgumentException("latency must not be negative, was " + perCall);
    }
    for (Call call : which.length == 0 ? EnumSet.allOf(Call.class) : Set.of(which)) {
      latencyNanos.put(call, perCall.toNanos());
    }
    return this;
  }

  /**
   * These calls (all, if none are named) fail with {@link StoreUnavailableException} without
   * reaching the store.
   */
  public FaultyStore down(Call... which) {
    return set(Fault.DOWN, which, EnumSet.allOf(Call.class));
  }

  /**
   * These calls (every fenced write, if none are named) reach the store and take effect, then fail
   * with {@link StoreUnavailableException}, as when a connection drops after the server committed.
   */
  public FaultyStore loseReplies(Call... which) {
    return set(Fault.LOSE_REPLY, which, Call.FENCED_WRITES);
  }

  /**
   * Claims and reads (both, if none are named) fail with {@link UnreadableRecordException} without
   * reaching the store, as when the record was written in a form this version cannot read.
   */
  public FaultyStore unreadable(Call... which) {
    for (Call call : which) {
      if (call != Call.CLAIM && call != Call.GET) {
        throw new IllegalArgumentException("only claims and reads meet unreadable records");
      }
    }
    return set(Fault.UNREADABLE, which, EnumSet.of(Call.CLAIM, Call.GET));
  }

  private void readable(Call call, RecordId id) {
    if (faults.get(call) == Fault.UNREADABLE) {
      counter(call).incrementAndGet();
      throw UnreadableRecordException.recordFormat(
          id, new IllegalStateException("injected: an unreadable record"));
    }
  }

  /**
   * These calls (all, if none are named) block before reaching the store until {@link #heal}, or
   * fail after {@link #MAX_PAUSE}: a store that stopped answering.
   */
  public FaultyStore pause(Call... which) {
    return set(Fault.PAUSE, which, EnumSet.allOf(Call.class));
  }

  /**
   * Switches off these calls' faults (every call's, if none are named), but not their latency, and
   * lets those of them that are paused go on; the other calls keep theirs. Healing one call alone
   * lets a test hold a call while another fails: a batch claim paused while the engine closes, say,
   * and then the give-backs of its claims meeting an outage.
   */
  public synchronized FaultyStore heal(Call... which) {
    Map<Call, Fault> next = new EnumMap<>(Call.class);
    next.putAll(faults);
    next.keySet().removeAll(which.length == 0 ? EnumSet.allOf(Call.class) : Set.of(which));
    faults = Map.copyOf(next);
    healed.countDown();
    healed = new CountDownLatch(1);
    return this;
  }

  /** How many calls of this kind were made, faulty or not; a batched heartbeat counts once. */
  public int calls(Call call) {
    return counter(call).get();
  }

  /**
   * How many calls of this kind the store has answered (with a result), blocking or asynchronous, a
   * lost reply included: unlike {@link #calls}, which counts a call as it starts, this says the
   * call is over, so a fault injected now cannot be missed by it.
   */
  public int answered(Call call) {
    return Objects.requireNonNull(answered.get(call)).get(); // the constructor puts every call
  }

  private synchronized FaultyStore set(Fault fault, Call[] which, Set<Call> all) {
    Map<Call, Fault> next = new EnumMap<>(Call.class);
    next.putAll(faults);
    for (Call call : which.length == 0 ? all : Set.of(which)) {
      next.put(call, fault);
    }
    faults = Map.copyOf(next);
    return this;
  }

  private AtomicInteger counter(Call call) {
    return Objects.requireNonNull(calls.get(call)); // the constructor puts every call
  }

  private <T> T call(Call call, Supplier<T> operation) {
    counter(call).incrementAndGet();
    sleepNanos(latencyNanos.getOrDefault(call, 0L));
    Fault fault = faults.get(call);
    if (fault == Fault.PAUSE) {
      awaitHeal(call);
      fault = faults.get(call);
    }
    if (fault == Fault.DOWN) {
      throw new StoreUnavailableException("injected: " + call + " failed", null);
    }
    T result = operation.get();
    Objects.requireNonNull(answered.get(call)).incrementAndGet();
    if (fault == Fault.LOSE_REPLY) {
      throw new StoreUnavailableException(
          "injected: the reply to " + call + " was lost after it took effect", null);
    }
    return result;
  }

  private void awaitHeal(Call call) {
    long deadline = System.nanoTime() + MAX_PAUSE.toNanos();
    try {
      while (true) {
        // The latch before the fault: a heal after this read opens this very latch.
        CountDownLatch next = healed;
        if (faults.get(call) != Fault.PAUSE) {
          return;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0 || !next.await(left, TimeUnit.NANOSECONDS)) {
          throw new StoreUnavailableException(
              "injected: " + call + " paused for longer than " + MAX_PAUSE, null);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("injected: interrupted while " + call + " was paused", e);
    }
  }

  private static void sleepNanos(long nanos) {
    if (nanos <= 0) {
      return;
    }
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("injected: interrupted during the latency", e);
    }
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    readable(Call.CLAIM, request.id());
    return tracked(List.of(request.id()), () -> call(Call.CLAIM, () -> delegate.claim(request)));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    readable(Call.GET, id);
    return call(Call.GET, () -> delegate.get(id));
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    return call(Call.HEARTBEAT, () -> delegate.heartbeat(id, token, lease));
  }

  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    return call(Call.HEARTBEAT, () -> delegate.heartbeat(leases, lease));
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    return call(Call.CHECKPOINT, () -> delegate.checkpoint(id, token, recoveryPoint, lease));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return call(Call.COMPLETE, () -> delegate.complete(id, token, result, ttl));
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return call(Call.FAIL_FINAL, () -> delegate.failFinal(id, token, result, ttl));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return call(Call.RELEASE, () -> delegate.release(id, token));
  }

  @Override
  public boolean endLease(RecordId id, long token) {
    return call(Call.END_LEASE, () -> delegate.endLease(id, token));
  }

  @Override
  public int purgeExpired(int batchSize) {
    return call(Call.PURGE, () -> delegate.purgeExpired(batchSize));
  }

  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    return call(Call.WATCH, () -> delegate.awaitChange(id));
  }

  @Override
  public boolean batches() {
    return gathers && delegate.batches();
  }

  @Override
  public int batchesAtOnce() {
    return delegate.batchesAtOnce();
  }

  @Override
  public boolean batchesOnThisThread() {
    return gathers && delegate.batchesOnThisThread();
  }

  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    if (!gathers) {
      return super.claimAll(requests);
    }
    List<RecordId> ids = records(requests, ClaimRequest::id);
    claimBatches.add(ids);
    return tracked(ids, () -> call(Call.CLAIM, () -> delegate.claimAll(requests)));
  }

  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    if (!gathers) {
      return super.finishAll(finishes);
    }
    finishBatches.add(records(finishes, Finish::id));
    return call(Call.COMPLETE, () -> delegate.finishAll(finishes));
  }

  @Override
  public CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    if (!gathers) {
      return super.claimAllAsync(requests, blocking);
    }
    List<RecordId> ids = records(requests, ClaimRequest::id);
    claimBatches.add(ids);
    return trackedAsync(
        ids,
        () ->
            callAsync(
                Call.CLAIM,
                () -> delegate.claimAllAsync(requests, blocking),
                () -> delegate.claimAll(requests)));
  }

  /** Runs a claim while its records count as under way, so that a claim meeting it is counted. */
  private <T> T tracked(List<RecordId> ids, Supplier<T> claim) {
    claimStarts(ids);
    try {
      return claim.get();
    } finally {
      claimEnds(ids);
    }
  }

  /** As {@link #tracked}, for a claim whose records stay under way until its answer comes. */
  private <T> CompletionStage<T> trackedAsync(
      List<RecordId> ids, Supplier<CompletionStage<T>> claim) {
    claimStarts(ids);
    try {
      return claim.get().whenComplete((answer, failure) -> claimEnds(ids));
    } catch (RuntimeException | Error e) {
      claimEnds(ids);
      throw e;
    }
  }

  private void claimStarts(List<RecordId> ids) {
    synchronized (claimsUnderWay) {
      if (ids.stream().anyMatch(claimsUnderWay::containsKey)) {
        claimsMeetingAnother.incrementAndGet();
      }
      for (RecordId id : ids) {
        claimsUnderWay.merge(id, 1, Integer::sum);
      }
    }
  }

  private void claimEnds(List<RecordId> ids) {
    synchronized (claimsUnderWay) {
      for (RecordId id : ids) {
        claimsUnderWay.computeIfPresent(id, (k, n) -> n == 1 ? null : n - 1);
      }
    }
  }

  @Override
  public CompletionStage<List<Boolean>> finishAllAsync(List<Finish> finishes, Executor blocking) {
    if (!gathers) {
      return super.finishAllAsync(finishes, blocking);
    }
    finishBatches.add(records(finishes, Finish::id));
    return callAsync(
        Call.COMPLETE,
        () -> delegate.finishAllAsync(finishes, blocking),
        () -> delegate.finishAll(finishes));
  }

  private static <T> List<RecordId> records(List<T> batch, Function<T, RecordId> id) {
    List<RecordId> ids = new ArrayList<>(batch.size());
    for (T item : batch) {
      ids.add(id.apply(item));
    }
    return ids;
  }

  // The asynchronous calls reach the store's own asynchronous client, so the kit tests a native
  // path with the same faults. A paused or slowed call waits on a thread of its own, as a slow
  // store would.

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    try {
      readable(Call.CLAIM, request.id());
    } catch (UnreadableRecordException e) {
      return CompletableFuture.failedFuture(e);
    }
    return trackedAsync(
        List.of(request.id()),
        () ->
            callAsync(
                Call.CLAIM,
                () -> delegate.claimAsync(request, blocking),
                () -> delegate.claim(request)));
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    try {
      readable(Call.GET, id);
    } catch (UnreadableRecordException e) {
      return CompletableFuture.failedFuture(e);
    }
    return callAsync(Call.GET, () -> delegate.getAsync(id, blocking), () -> delegate.get(id));
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return callAsync(
        Call.COMPLETE,
        () -> delegate.completeAsync(id, token, result, ttl, blocking),
        () -> delegate.complete(id, token, result, ttl));
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return callAsync(
        Call.FAIL_FINAL,
        () -> delegate.failFinalAsync(id, token, result, ttl, blocking),
        () -> delegate.failFinal(id, token, result, ttl));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return callAsync(
        Call.RELEASE,
        () -> delegate.releaseAsync(id, token, blocking),
        () -> delegate.release(id, token));
  }

  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return callAsync(
        Call.END_LEASE,
        () -> delegate.endLeaseAsync(id, token, blocking),
        () -> delegate.endLease(id, token));
  }

  @Override
  public CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, Duration lease, Executor blocking) {
    return callAsync(
        Call.HEARTBEAT,
        () -> delegate.heartbeatAsync(leases, lease, blocking),
        () -> delegate.heartbeat(leases, lease));
  }

  private <T> CompletionStage<T> callAsync(
      Call call, Supplier<CompletionStage<T>> operation, Supplier<T> blocking) {
    Fault fault = faults.get(call);
    if (fault == Fault.PAUSE || latencyNanos.getOrDefault(call, 0L) > 0) {
      CompletableFuture<T> result = new CompletableFuture<>();
      Thread waiter =
          new Thread(
              () -> {
                try {
                  result.complete(call(call, blocking));
                } catch (RuntimeException | Error e) {
                  result.completeExceptionally(e);
                }
              },
              "faulty-store-" + call);
      waiter.setDaemon(true);
      waiter.start();
      return result;
    }
    counter(call).incrementAndGet();
    if (fault == Fault.DOWN) {
      return CompletableFuture.failedFuture(
          new StoreUnavailableException("injected: " + call + " failed", null));
    }
    AtomicInteger answeredCalls = Objects.requireNonNull(answered.get(call));
    CompletionStage<T> result =
        operation
            .get()
            .thenApply(
                r -> {
                  answeredCalls.incrementAndGet();
                  return r;
                });
    if (fault == Fault.LOSE_REPLY) {
      return result.thenCompose(
          r ->
              CompletableFuture.failedFuture(
                  new StoreUnavailableException(
                      "injected: the reply to " + call + " was lost after it took effect", null)));
    }
    return result;
  }
}

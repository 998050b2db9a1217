package dev.once;

import dev.once.internal.Arguments;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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

  /**
   * The most single calls one gathered batch carries: enough that a store's round trip serves a
   * crowd, few enough that one batch stays a short transaction.
   */
  private static final int MAX_BATCH = 128;

  /**
   * The most gathered claim (and, separately, finish) calls under way at once: as many as the store
   * asks for ({@link IdempotencyStore#batchesAtOnce}), and more only side by side with full batches
   * waiting ({@link Batcher}), so that a crowd larger than a batch is still served.
   */
  private static final int BATCHES_IN_FLIGHT = IdempotencyStore.MOST_BATCHES_AT_ONCE;

  /** How long {@link #close()} waits for the store calls under way, finishing writes above all. */
  private static final Duration CLOSE_DRAIN = Duration.ofSeconds(5);

  private final IdempotencyStore store;
  private final ExecutionPolicy defaults;
  private final Events events;
  private final Heartbeats heartbeats;
  private final Admissions admissions;
  private final Runs runs;

  /** The engine's own store executor, which it shuts down on close; null if it was given one. */
  private final @Nullable ExecutorService ownExecutor;

  private volatile boolean closed;

  private Once(Builder b) {
    this.store =
        b.listener == OnceListener.NONE ? b.store : new ObservingStore(b.store, b.listener);
    this.defaults = b.defaults;
    this.events = Events.of(b.listener);
    this.heartbeats = new Heartbeats(store, b.scheduler, b.heartbeatThreads, b.heartbeatBatchSize);
    // Where the asynchronous calls of a store without an asynchronous client block; finishing
    // writes of admitted leases block there too, but are never refused.
    Executor blocking;
    if (b.storeExecutor == null) {
      ExecutorService own = StoreExecutor.create(b.storeThreads);
      this.ownExecutor = own;
      blocking = own;
    } else {
      this.ownExecutor = null;
      blocking = b.storeExecutor;
    }
    Executor finishing = new FinishingExecutor(blocking);
    // Concurrent callers' claims and finishing writes gathered into batch calls, where the store
    // batches (IdempotencyStore#batches).
    Batcher<ClaimRequest, ClaimResult> claims = null;
    Batcher<dev.once.store.Finish, Boolean> finishes = null;
    if (store.batches()) {
      int asked = store.batchesAtOnce();
      if (asked < 1) {
        throw new IllegalArgumentException(
            "the store's batchesAtOnce() must be at least 1, was " + asked);
      }
      int atOnce = Math.min(asked, BATCHES_IN_FLIGHT);
      claims =
          new Batcher<>(
              new BatchedCalls.Claims(store, blocking), MAX_BATCH, atOnce, BATCHES_IN_FLIGHT);
      finishes =
          new Batcher<>(
              new BatchedCalls.Finishes(store, finishing), MAX_BATCH, atOnce, BATCHES_IN_FLIGHT);
    }
    this.admissions =
        new Admissions(store, events, heartbeats, blocking, finishing, claims, finishes);
    this.runs = new Runs(events);
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
    ClaimRequest request =
        executeRequest(scope, key, fingerprint, policy, codec, classifier, operation);
    return Step.block(
        executing(
            request,
            policy,
            codec,
            classifier,
            context -> Io.of(() -> operation.run(context), Once::neverStarted)));
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
    ClaimRequest request =
        executeRequest(scope, key, fingerprint, policy, codec, classifier, operation);
    return Step.start(
        () ->
            executing(
                request,
                policy,
                codec,
                classifier,
                context -> Io.of(Once::neverBlocked, () -> started(operation, context))));
  }

  /** The claim of an execute call, its arguments checked before anything else happens. */
  private static ClaimRequest executeRequest(
      Scope scope,
      IdempotencyKey key,
      Fingerprint fingerprint,
      ExecutionPolicy policy,
      ResultCodec<?> codec,
      OutcomeClassifier<?> classifier,
      Operation<?> operation) {
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(classifier, "classifier");
    Objects.requireNonNull(operation, "operation");
    return request(scope, key, fingerprint, policy);
  }

  /**
   * The claim, then what its admission gives: the work run by {@code work}'s call, or an answer
   * without it. An engine that is closed refuses here, before anything is claimed.
   */
  private <T> Step<ExecutionResult<T>> executing(
      ClaimRequest request,
      ExecutionPolicy policy,
      ResultCodec<T> codec,
      OutcomeClassifier<? super T> classifier,
      Function<ExecutionContext, Io<T>> work) {
    return admitting(request, policy)
        .then(admission -> runs.of(admission, request.id(), codec, classifier, work));
  }

  // The user's work has one form: execute's blocks, executeAsync's answers with a stage.

  private static <T> CompletionStage<T> neverStarted() {
    throw new IllegalStateException("a blocking operation was started asynchronously");
  }

  private static <T> T neverBlocked() {
    throw new IllegalStateException("an asynchronous operation was made blocking");
  }

  /** The operation's stage; what it throws instead of answering one fails the stage. */
  private static <T> CompletionStage<T> started(
      Operation<? extends CompletionStage<T>> operation, ExecutionContext context) {
    try {
      return Objects.requireNonNull(operation.run(context), "the operation returned no stage");
    } catch (Exception | Error e) {
      return CompletableFuture.failedFuture(e);
    }
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
    return Step.block(admitting(request(scope, key, fingerprint, policy), policy));
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
    ClaimRequest request = request(scope, key, fingerprint, policy);
    return Step.start(() -> admitting(request, policy));
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
      ClaimRequest request = request(c.scope(), c.key(), c.fingerprint(), policy);
      if (!distinct.add(request.id())) {
        throw new IllegalArgumentException(
            "two claims name " + request.id() + "; claim them separately");
      }
      requests.add(request);
    }
    requireOpen(policy);
    return requests.isEmpty() ? List.of() : admissions.beginAll(requests, policy);
  }

  /**
   * What a duplicate of (scope, key) would be answered, without claiming: a replay, a mismatch or
   * an in-flight conflict if a record exists; empty if none does (or the store cannot say), so a
   * claim would create one. For callers that must not create a record now but should still answer
   * retries, such as a rate limit on new keys. One store read; never runs or waits for anything.
   */
  public Optional<Admission> existing(Scope scope, IdempotencyKey key, Fingerprint fingerprint) {
    return Step.block(admissions.existing(RecordId.of(scope, key), fingerprint));
  }

  /** {@link #existing}, asynchronously, as {@link #beginAsync} calls the store. */
  public CompletionStage<Optional<Admission>> existingAsync(
      Scope scope, IdempotencyKey key, Fingerprint fingerprint) {
    RecordId id = RecordId.of(scope, key);
    return Step.start(() -> admissions.existing(id, fingerprint));
  }

  private static ClaimRequest request(
      Scope scope, IdempotencyKey key, Fingerprint fingerprint, ExecutionPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    return new ClaimRequest(RecordId.of(scope, key), fingerprint, policy.lease(), policy.ttl());
  }

  /** The claim and its answer, refused before anything is claimed by an engine that is closed. */
  private Step<Admission> admitting(ClaimRequest request, ExecutionPolicy policy) {
    requireOpen(policy);
    return admissions.begin(request, policy);
  }

  private void requireOpen(ExecutionPolicy policy) {
    if (closed) {
      throw new IllegalStateException("this Once is closed");
    }
    if (policy.heartbeat() && !heartbeats.running()) {
      throw new IllegalStateException("the heartbeat scheduler of this Once was shut down");
    }
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
     * StoreExecutor#QUEUE_PER_THREAD} per thread, and never fewer than {@value
     * StoreExecutor#MIN_QUEUE} in all, wait for one. A store whose calls never hold a thread (the
     * embedded store) needs no more threads than cores: they only carry on after its answers.
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

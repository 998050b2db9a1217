package dev.once.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.once.Admission;
import dev.once.Claim;
import dev.once.ExecutionPolicy;
import dev.once.ExecutionResult;
import dev.once.FailureMode;
import dev.once.Fingerprint;
import dev.once.InFlightPolicy;
import dev.once.Lease;
import dev.once.Once;
import dev.once.OnceEvent;
import dev.once.OnceListener;
import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import dev.once.Recording;
import dev.once.ResultCodec;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.tck.FaultyStore.Call;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the engine promises over a store, whatever the store: every claim is finished — completed,
 * failed finally, released or abandoned to its lease — when a classifier, a codec or a listener
 * throws, when the engine is closed, or when the store fails; and a lease whose heartbeats cannot
 * reach the store is reported lost once its local deadline passes (DESIGN §1–2).
 *
 * <p>A store proves itself by extending this class and supplying the store, as with {@link
 * IdempotencyStoreContract}. The store is wrapped in a {@link FaultyStore} for the tests that
 * inject faults.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class EngineContract {

  private static final ResultCodec<String> UTF8 = ResultCodec.utf8();

  /** The store under test, wrapped for fault injection; a fresh wrapper for each test. */
  protected FaultyStore store;

  private IdempotencyStore underlying;
  private Once once;
  private final AtomicInteger runs = new AtomicInteger();

  /** Returns the store to test; called before each test. */
  protected abstract IdempotencyStore createStore();

  /**
   * A lease short enough to wait out in a test, long enough for the store to answer well within it.
   * Default 300 ms; a store whose clock is coarse returns more.
   */
  protected Duration shortLease() {
    return Duration.ofMillis(300);
  }

  @BeforeEach
  void openEngineUnderTest() {
    underlying = createStore();
    store = FaultyStore.wrap(underlying);
    once = Once.of(store);
  }

  @AfterEach
  void closeEngineUnderTest() {
    once.close();
    underlying.close();
  }

  // ------------------------------------------------------- classifiers and codecs that throw

  @Test
  void aClassifierThatThrowsOnASuccessfulValueRecordsTheWorkAsDone() {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    OutcomeClassifier<String> broken =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classify(String result) {
            throw new IllegalStateException("classifier bug");
          }
        };

    ExecutionResult<String> first =
        once.execute(id.scope(), id.key(), fp, UTF8, broken, policy(), ctx -> run());

    assertThat(first)
        .isEqualTo(
            new ExecutionResult.Executed<>(
                "run 1", Outcome.COMPLETED, Recording.RESULT_NOT_STORED));
    assertThat(once.execute(id.scope(), id.key(), fp, UTF8, ctx -> run()))
        .isInstanceOf(ExecutionResult.ResponseUnavailable.class);
    assertThat(runs).hasValue(1);
  }

  @Test
  void aClassifierThatThrowsOnAnErrorAbandonsTheLeaseToItsEnd() {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    OutcomeClassifier<String> broken =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classifyError(Throwable error) {
            throw new IllegalStateException("classifier bug");
          }
        };
    ExecutionPolicy policy = policy().toBuilder().lease(shortLease()).build();

    assertThatThrownBy(
            () ->
                once.execute(
                    id.scope(),
                    id.key(),
                    fp,
                    UTF8,
                    broken,
                    policy,
                    ctx -> {
                      runs.incrementAndGet();
                      throw new IllegalArgumentException("the operation failed");
                    }))
        .isInstanceOf(IllegalArgumentException.class)
        .satisfies(
            e ->
                assertThat(e.getSuppressed())
                    .anyMatch(s -> "classifier bug".equals(s.getMessage())));

    // Neither released (the effect is unknown) nor kept alive: a retry takes over once the lease
    // ends.
    assertThat(store.get(id))
        .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.IN_PROGRESS));
    Eventually.assertThat(
        "the abandoned lease ended",
        Duration.ofSeconds(10),
        () -> store.get(id).map(IdempotencyRecord::isStealable).orElse(false));
    Admission retry = once.begin(id.scope(), id.key(), fp, policy());
    assertThat(retry).isInstanceOf(Admission.Proceed.class);
    assertThat(((Admission.Proceed) retry).lease().stolen()).isTrue();
    ((Admission.Proceed) retry).lease().release();
  }

  @Test
  void aCodecThatThrowsRecordsTheWorkAsDone() {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    ResultCodec<String> broken =
        new ResultCodec<>() {
          @Override
          public byte[] encode(String value) {
            throw new IllegalStateException("codec bug");
          }

          @Override
          public String decode(byte[] bytes) {
            throw new IllegalStateException("codec bug");
          }
        };

    ExecutionResult<String> first = once.execute(id.scope(), id.key(), fp, broken, ctx -> run());

    assertThat(first)
        .isEqualTo(
            new ExecutionResult.Executed<>(
                "run 1", Outcome.COMPLETED, Recording.RESULT_NOT_STORED));
    assertThat(once.execute(id.scope(), id.key(), fp, UTF8, ctx -> run()))
        .isInstanceOf(ExecutionResult.ResponseUnavailable.class);
    assertThat(runs).hasValue(1);
  }

  @Test
  void aListenerThatThrowsLeavesNoClaimUnfinished() {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    OnceListener throwing =
        new OnceListener() {
          @Override
          public void onEvent(OnceEvent event) {
            throw new IllegalStateException("listener bug");
          }

          @Override
          public void onStoreCall(String operation, long nanos) {
            throw new IllegalStateException("listener bug");
          }
        };
    try (Once listened = Once.builder(store).listener(throwing).build()) {
      assertThat(listened.execute(id.scope(), id.key(), fp, UTF8, ctx -> run()))
          .isEqualTo(
              new ExecutionResult.Executed<>("run 1", Outcome.COMPLETED, Recording.RECORDED));
      assertThat(listened.execute(id.scope(), id.key(), fp, UTF8, ctx -> run()))
          .isEqualTo(new ExecutionResult.Replayed<>("run 1", Outcome.COMPLETED));
    }
    assertThat(store.get(id))
        .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.COMPLETED));
  }

  // ---------------------------------------------------------------- a closed engine

  @Test
  void aClosedEngineRefusesBeforeClaiming() {
    RecordId id = Samples.newId();
    once.close();

    assertThatThrownBy(
            () -> once.execute(id.scope(), id.key(), Samples.newFingerprint(), UTF8, ctx -> run()))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> once.begin(id.scope(), id.key(), Samples.newFingerprint(), policy()))
        .isInstanceOf(IllegalStateException.class);

    assertThat(store.calls(Call.CLAIM)).isZero();
    assertThat(store.get(id)).isEmpty();
    assertThat(runs).hasValue(0);
  }

  @Test
  void anEngineWhoseHeartbeatSchedulerWasShutDownRefusesBeforeClaiming() {
    RecordId id = Samples.newId();
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    try (Once scheduled = Once.builder(store).heartbeatScheduler(scheduler).build()) {
      scheduler.shutdown();

      assertThatThrownBy(
              () ->
                  scheduled.execute(
                      id.scope(), id.key(), Samples.newFingerprint(), UTF8, ctx -> run()))
          .isInstanceOf(IllegalStateException.class);
    }
    assertThat(store.calls(Call.CLAIM)).isZero();
    assertThat(store.get(id)).isEmpty();
  }

  // ---------------------------------------------------------------- slow and failing stores

  @Test
  void leaseLostTurnsTrueOnceHeartbeatsHaveNotReachedTheStoreForALease() {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    ExecutionPolicy policy = policy().toBuilder().lease(shortLease()).build();
    long claimed = System.nanoTime();
    Lease lease = ((Admission.Proceed) once.begin(id.scope(), id.key(), fp, policy)).lease();
    store.down(Call.HEARTBEAT);

    Eventually.assertThat(
        "leaseLost() after a partition longer than the lease",
        Duration.ofSeconds(10),
        lease::leaseLost);

    assertThat(System.nanoTime() - claimed).isGreaterThanOrEqualTo(shortLease().toNanos());
    store.heal();
    // Nobody took the key meanwhile: the store, which fences every write, still accepts the
    // holder's.
    assertThat(lease.complete(new byte[] {1})).isEqualTo(Recording.RECORDED);
  }

  @Test
  void heartbeatsKeepALeaseAliveLongAfterItWouldHaveEnded() {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    ExecutionPolicy policy = policy().toBuilder().lease(shortLease()).build();
    Lease lease = ((Admission.Proceed) once.begin(id.scope(), id.key(), fp, policy)).lease();
    int before = store.calls(Call.HEARTBEAT);

    Eventually.assertThat(
        "three heartbeats",
        Duration.ofSeconds(10),
        () -> store.calls(Call.HEARTBEAT) >= before + 3);
    long until = System.nanoTime() + shortLease().toNanos() * 2;
    Eventually.assertThat(
        "two more leases passed", Duration.ofSeconds(10), () -> System.nanoTime() - until >= 0);

    assertThat(store.claim(new dev.once.store.ClaimRequest(id, fp, policy.lease(), policy.ttl())))
        .as("a retry while the holder runs")
        .isInstanceOf(ClaimResult.Existing.class);
    assertThat(lease.leaseLost()).isFalse();
    assertThat(lease.complete(new byte[] {1})).isEqualTo(Recording.RECORDED);
  }

  @Test
  void aDuplicateThatSawTheRequestInFlightIsNeverRunUnguardedWhenTheStoreFails() throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    ExecutionPolicy waitOpen =
        policy().toBuilder()
            .failureMode(FailureMode.FAIL_OPEN)
            .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20)))
            .build();
    Lease first = ((Admission.Proceed) once.begin(id.scope(), id.key(), fp, policy())).lease();
    int claimsBefore = store.answered(Call.CLAIM);

    CompletableFuture<ExecutionResult<String>> duplicate =
        CompletableFuture.supplyAsync(
            () ->
                once.execute(
                    id.scope(),
                    id.key(),
                    fp,
                    UTF8,
                    OutcomeClassifier.defaults(),
                    waitOpen,
                    ctx -> run()));
    Eventually.assertThat(
        "the duplicate saw the first in flight",
        Duration.ofSeconds(10),
        // Answered, not merely started: a claim under way when the store goes down could still
        // pass the fault check and then meet the released key.
        () -> store.answered(Call.CLAIM) >= claimsBefore + 2);
    store.down(Call.CLAIM, Call.GET);
    first.release(); // wakes the waiting duplicate, whose claim now meets a store that is down

    ExecutionResult<String> answer = duplicate.get(30, TimeUnit.SECONDS);

    assertThat(answer).isInstanceOf(ExecutionResult.InFlight.class);
    assertThat(runs).as("the duplicate ran unguarded").hasValue(0);
  }

  // ---------------------------------------------------------------- the asynchronous API

  @Test
  void anAsyncBeginClaimsAndItsAsyncCompletionIsReplayedToTheNextAsyncBegin() throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();

    Lease lease = proceed(once.beginAsync(id.scope(), id.key(), fp, policy()));
    assertThat(await(lease.completeAsync(new byte[] {7, 8}))).isEqualTo(Recording.RECORDED);
    Admission replay = await(once.beginAsync(id.scope(), id.key(), fp, policy()));
    Admission mismatch =
        await(once.beginAsync(id.scope(), id.key(), Samples.newFingerprint(), policy()));

    assertThat(replay)
        .isInstanceOfSatisfying(
            Admission.Replay.class, r -> assertThat(r.value()).containsExactly(7, 8));
    assertThat(mismatch).isInstanceOf(Admission.FingerprintMismatch.class);
    assertThat(store.get(id))
        .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.COMPLETED));
  }

  @Test
  void anAsyncReleaseLetsTheNextAsyncBeginRunAfreshUnderALargerToken() throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    Lease first = proceed(once.beginAsync(id.scope(), id.key(), fp, policy()));

    assertThat(await(first.releaseAsync())).isEqualTo(Recording.RELEASED);
    Lease second = proceed(once.beginAsync(id.scope(), id.key(), fp, policy()));

    assertThat(second.token()).isGreaterThan(first.token());
    assertThat(second.stolen()).isFalse();
    assertThat(await(second.completeWithoutResultAsync())).isEqualTo(Recording.RESULT_NOT_STORED);
    assertThat(await(once.beginAsync(id.scope(), id.key(), fp, policy())))
        .isInstanceOf(Admission.ResponseUnavailable.class);
  }

  @Test
  void anAsyncDuplicateIsRefusedWhileInFlightAndInWaitModeGetsTheReplayOnceTheFirstFinishes()
      throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    Lease first = proceed(once.beginAsync(id.scope(), id.key(), fp, policy()));
    ExecutionPolicy waiting =
        policy().toBuilder().inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20))).build();

    Admission refused = await(once.beginAsync(id.scope(), id.key(), fp, policy()));
    CompletableFuture<Admission> held =
        once.beginAsync(id.scope(), id.key(), fp, waiting).toCompletableFuture();
    assertThat(held).as("the waiting duplicate answered before the first finished").isNotDone();
    assertThat(await(first.failFinalAsync(new byte[] {9}))).isEqualTo(Recording.RECORDED);

    assertThat(refused).isInstanceOf(Admission.InFlight.class);
    assertThat(held.get(30, TimeUnit.SECONDS))
        .isInstanceOfSatisfying(
            Admission.Replay.class, r -> assertThat(r.value()).containsExactly(9));
  }

  @Test
  void anAsyncFinishAfterTheLeaseWasTakenOverIsLeaseLostAndChangesNothing() throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    ExecutionPolicy unbeaten = policy().toBuilder().lease(shortLease()).heartbeat(false).build();
    Lease first = proceed(once.beginAsync(id.scope(), id.key(), fp, unbeaten));
    Eventually.assertThat(
        "the lease ended",
        Duration.ofSeconds(10),
        () -> store.get(id).map(IdempotencyRecord::isStealable).orElse(false));
    Lease thief = proceed(once.beginAsync(id.scope(), id.key(), fp, policy()));

    assertThat(await(first.completeAsync(new byte[] {1}))).isEqualTo(Recording.LEASE_LOST);
    assertThat(first.leaseLost()).isTrue();
    assertThat(await(thief.completeAsync(new byte[] {2}))).isEqualTo(Recording.RECORDED);
    assertThat(await(once.beginAsync(id.scope(), id.key(), fp, policy())))
        .isInstanceOfSatisfying(
            Admission.Replay.class, r -> assertThat(r.value()).containsExactly(2));
  }

  @Test
  void anAsyncBeginOnAStoreThatIsDownClaimsNothingAndAnAsyncFinishRetriesUntilItLands()
      throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    store.down(Call.CLAIM);

    Admission down = await(once.beginAsync(id.scope(), id.key(), fp, policy()));
    store.heal();
    Lease lease = proceed(once.beginAsync(id.scope(), id.key(), fp, policy()));
    store.loseReplies(Call.COMPLETE);
    CompletableFuture<Recording> recording =
        lease.completeAsync(new byte[] {3}).toCompletableFuture();
    Eventually.assertThat(
        "the completion was sent", Duration.ofSeconds(10), () -> store.calls(Call.COMPLETE) >= 1);
    store.heal();

    assertThat(down).isInstanceOf(Admission.StoreUnavailable.class);
    assertThat(recording.get(30, TimeUnit.SECONDS))
        .as("a retry saw that the lost reply had landed")
        .isEqualTo(Recording.RECORDED);
    assertThat(store.get(id))
        .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.COMPLETED));
  }

  @Test
  void aClosedEngineRefusesAnAsyncBeginBeforeClaiming() {
    RecordId id = Samples.newId();
    once.close();

    CompletionStage<Admission> refused =
        once.beginAsync(id.scope(), id.key(), Samples.newFingerprint(), policy());

    assertThatThrownBy(() -> await(refused)).hasCauseInstanceOf(IllegalStateException.class);
    assertThat(store.calls(Call.CLAIM)).isZero();
  }

  // ------------------------------------------------------- herds: concurrency never changes the
  // answer

  /**
   * Identical requests for a new key sent at once, through each entry point, mixed with other keys
   * so that a store which gathers calls puts them in the same batches: the work runs once per key,
   * under one token (DESIGN §2). On a store that gathers, the test shows that the herd did meet the
   * gathering (a herd that never shared a batch with anything would test nothing), and that no
   * batch held one record twice.
   */
  @ParameterizedTest
  @EnumSource(EngineHerd.Entry.class)
  void aHerdOfIdenticalRequestsRunsTheWorkOnceUnderOneToken(EngineHerd.Entry entry)
      throws Exception {
    HerdRun run = herdRunsOnceEach(Duration.ofMillis(5), entry, 4, 8, 16);

    FaultyStore gathered = run.store();
    if (underlying.batches() || entry == EngineHerd.Entry.BEGIN_ALL) {
      assertThat(EngineHerd.gathered(gathered.claimBatches(), run.keys()))
          .as("some batch held a herd key with other calls: %s", gathered.claimBatches())
          .isTrue();
    }
    assertThat(gathered.claimBatches())
        .allSatisfy(batch -> assertThat(Set.copyOf(batch)).hasSameSizeAs(batch));
    assertThat(gathered.finishBatches())
        .allSatisfy(batch -> assertThat(Set.copyOf(batch)).hasSameSizeAs(batch));
  }

  /**
   * A herd big enough that full batches wait while one is under way and go alongside it, so that
   * two claims carrying the same key (batches, or single calls where the store asks for more than
   * one under way at once) reach the store at once: the store's own concurrency, not the engine's
   * queue, then decides who runs the work, and it still runs once per key, under one token. On a
   * store that gathers, the test shows that such claims did meet.
   */
  @ParameterizedTest
  @EnumSource(
      value = EngineHerd.Entry.class,
      names = {"EXECUTE", "EXECUTE_ASYNC"})
  void aHerdThatFillsBatchesSideBySideRunsTheWorkOnceUnderOneToken(EngineHerd.Entry entry)
      throws Exception {
    // Long enough a claim that the whole herd queues behind the first batch, and a full batch
    // goes alongside it. Which calls meet is the scheduler's to decide: a run where none did (seen
    // once in many on Redis with four batches at once, whose first calls under way carried no
    // herd key) shows nothing about meetings, so up to three herds run, each held to the ledger
    // rule, until claims have met.
    FaultyStore gathered = herdRunsOnceEach(Duration.ofMillis(40), entry, 4, 80, 32).store();
    for (int herd = 2; herd <= 3 && underlying.batches(); herd++) {
      if (gathered.claimsMeetingAnother() > 0) {
        break;
      }
      gathered = herdRunsOnceEach(Duration.ofMillis(40), entry, 4, 80, 32).store();
    }

    if (underlying.batches()) {
      assertThat(gathered.claimsMeetingAnother())
          .as(
              "claims that met another carrying one of their keys (%d batches)",
              gathered.claimBatches().size())
          .isPositive();
    }
  }

  /** A herd that has run, over the store that gathered its calls, and the herd's keys. */
  private record HerdRun(FaultyStore store, List<RecordId> keys) {}

  /**
   * Sends a herd ({@link EngineHerd#run}) through an engine over the store, its claims slowed by
   * {@code claimLatency} so that they queue, and checks the ledger rule.
   */
  private HerdRun herdRunsOnceEach(
      Duration claimLatency, EngineHerd.Entry entry, int herdKeys, int copies, int loners)
      throws Exception {
    FaultyStore gathered =
        FaultyStore.wrap(underlying).gathering().latency(claimLatency, Call.CLAIM);
    try (Once engine = Once.of(gathered)) {
      EngineHerd herd = new EngineHerd(engine, engine.defaults());
      List<RecordId> keys = herd.run(entry, herdKeys, copies, loners);
      assertRanOnceEach(herd, keys);
      return new HerdRun(gathered, keys);
    }
  }

  /** The ledger rule over a herd: each of its keys ran once, under one token. */
  private static void assertRanOnceEach(EngineHerd herd, List<RecordId> keys) {
    assertThat(EngineHerd.duplicates(herd.ran())).as("keys whose work ran twice").isEmpty();
    for (RecordId id : keys) {
      assertThat(herd.ran().get(id)).as("the runs of %s", id).hasSize(1);
    }
  }

  /**
   * The same herd while the store loses the replies to claims that took effect, then is down for a
   * moment, then heals: a claim whose answer was lost is held by nobody until its lease ends, and a
   * finishing write that meets the outage is tried again, so a key may run once or not yet, never
   * twice.
   */
  @Test
  void aHerdThatMeetsLostClaimRepliesAndAnOutageStillRunsTheWorkAtMostOnce() throws Exception {
    FaultyStore gathered =
        FaultyStore.wrap(underlying).gathering().latency(Duration.ofMillis(5), Call.CLAIM);
    gathered.loseReplies(Call.CLAIM);
    ScheduledExecutorService healer = Executors.newSingleThreadScheduledExecutor();
    try (Once engine = Once.of(gathered)) {
      healer.schedule(() -> gathered.heal().down(), 30, TimeUnit.MILLISECONDS);
      healer.schedule(() -> gathered.heal(), 80, TimeUnit.MILLISECONDS);
      EngineHerd herd = new EngineHerd(engine, engine.defaults()).toleratingStoreFailures();

      herd.run(EngineHerd.Entry.EXECUTE, 4, 8, 16);

      assertThat(EngineHerd.duplicates(herd.ran())).as("keys whose work ran twice").isEmpty();
    } finally {
      healer.shutdownNow();
    }
  }

  /**
   * A seeded random concurrent history over a few keys, through every entry point, gathered where
   * the store gathers: at most one effect per key, every replay answers it, and no key is left in
   * flight ({@link EngineHistory}). A failure names its seed; {@code -Donce.history.seed} replays
   * the same operations. Bounded to a few seconds here; the chaos profile runs it longer.
   */
  @Test
  void aRandomConcurrentHistoryKeepsTheLedgerRule() throws Exception {
    // A few milliseconds a claim, so that concurrent claims queue and are gathered into batches.
    FaultyStore gathered =
        FaultyStore.wrap(underlying).gathering().latency(Duration.ofMillis(3), Call.CLAIM);
    try (Once engine = Once.of(gathered)) {
      EngineHistory history =
          new EngineHistory(engine, underlying, 12, 6, 150, Duration.ofSeconds(6));

      assertThat(history.run()).as("seed %d", history.seed()).isEmpty();
    }
  }

  /** {@link #aRandomConcurrentHistoryKeepsTheLedgerRule}, for most of a minute: the chaos run. */
  @Test
  @Tag("chaos")
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void aLongRandomConcurrentHistoryKeepsTheLedgerRule() throws Exception {
    FaultyStore gathered =
        FaultyStore.wrap(underlying).gathering().latency(Duration.ofMillis(3), Call.CLAIM);
    try (Once engine = Once.of(gathered)) {
      EngineHistory history =
          new EngineHistory(engine, underlying, 16, 8, 1_000_000, Duration.ofSeconds(30));

      assertThat(history.run()).as("seed %d", history.seed()).isEmpty();
    }
  }

  // ------------------------------------------------------- waiting, batches and give-backs

  /**
   * In wait mode a duplicate whose change subscription fails (Redis's SUBSCRIBE timed out) is
   * answered as a store failure while waiting: "in flight", since the store said so, and never
   * unguarded under fail-open, which would run the work a second time.
   */
  /** The two ways to call the engine, which must answer alike: they drive the same rules. */
  private enum Api {
    BLOCKING,
    ASYNC;

    Admission begin(Once once, RecordId id, Fingerprint fp, ExecutionPolicy policy)
        throws Exception {
      return this == BLOCKING
          ? once.begin(id.scope(), id.key(), fp, policy)
          : await(once.beginAsync(id.scope(), id.key(), fp, policy));
    }

    Recording complete(Lease lease, String value) throws Exception {
      return this == BLOCKING
          ? lease.complete(UTF8.encode(value))
          : await(lease.completeAsync(UTF8.encode(value)));
    }
  }

  /**
   * Every store failure met while admitting, waiting and finishing is answered by the rule that
   * reads it, the same for both APIs: a claim the store cannot make (by the failure mode), a record
   * it cannot read (never run, even fail-open), one that becomes unreadable while a duplicate waits
   * for it, and a finishing write that never reaches the store (the outcome is unknown).
   */
  @ParameterizedTest
  @EnumSource(Api.class)
  void eachStoreFailureIsAnsweredByOneRuleWhicheverApiMeetsIt(Api api) throws Exception {
    Fingerprint fp = Samples.newFingerprint();
    ExecutionPolicy open = policy().toBuilder().failureMode(FailureMode.FAIL_OPEN).build();
    store.down(Call.CLAIM);
    assertThat(api.begin(once, Samples.newId(), fp, policy()))
        .isInstanceOf(Admission.StoreUnavailable.class);
    assertThat(api.begin(once, Samples.newId(), fp, open)).isInstanceOf(Admission.Unguarded.class);
    store.heal().unreadable(Call.CLAIM);
    assertThat(api.begin(once, Samples.newId(), fp, open))
        .isInstanceOf(Admission.ResponseUnavailable.class);
    store.heal();

    // The first holds its key for a short lease it never renews: the duplicate waits it out, and
    // its claim after that meets the record unreadable. No claim of the duplicate can be under way
    // when the record changes, as one would be if the first finished instead.
    RecordId held = Samples.newId();
    ExecutionPolicy briefly =
        policy().toBuilder().lease(shortLease().multipliedBy(4)).heartbeat(false).build();
    Lease first = ((Admission.Proceed) api.begin(once, held, fp, briefly)).lease();
    ExecutionPolicy waitOpen =
        open.toBuilder().inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20))).build();
    int watches = store.calls(Call.WATCH);
    CompletableFuture<Admission> waiter =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return api.begin(once, held, fp, waitOpen);
              } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
              }
            });
    Eventually.assertThat(
        "the duplicate waits", Duration.ofSeconds(10), () -> store.calls(Call.WATCH) > watches);
    store.unreadable(Call.CLAIM);
    assertThat(await(waiter)).isInstanceOf(Admission.ResponseUnavailable.class);
    store.heal();
    first.abandon();

    Lease unknown = ((Admission.Proceed) api.begin(once, Samples.newId(), fp, policy())).lease();
    store.down(Call.COMPLETE);
    assertThat(api.complete(unknown, "never landed")).isEqualTo(Recording.UNKNOWN);
    store.heal();
  }

  @Test
  void aFailingChangeSubscriptionWhileWaitingNeverRunsTheDuplicateUnguarded() throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    ExecutionPolicy waitOpen =
        policy().toBuilder()
            .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(2)))
            .failureMode(FailureMode.FAIL_OPEN)
            .build();
    Lease first = ((Admission.Proceed) once.begin(id.scope(), id.key(), fp, policy())).lease();
    store.down(Call.WATCH);

    assertThat(once.begin(id.scope(), id.key(), fp, waitOpen))
        .isInstanceOf(Admission.InFlight.class);
    assertThat(await(once.beginAsync(id.scope(), id.key(), fp, waitOpen)))
        .isInstanceOf(Admission.InFlight.class);
    store.heal();
    first.complete(UTF8.encode("first"));
  }

  /**
   * A consumer's batch in wait mode: the keys it won are kept alive while it waits for a key that
   * another request holds, so none has lapsed (and been stolen) by the time the batch is answered.
   */
  @Test
  void beginAllKeepsTheLeasesItWonAliveWhileItWaitsForAnotherKey() throws Exception {
    Duration lease = shortLease();
    ExecutionPolicy shortLeases = policy().toBuilder().lease(lease).build();
    RecordId held = Samples.newId();
    Fingerprint heldFp = Samples.newFingerprint();
    Lease holder =
        ((Admission.Proceed) once.begin(held.scope(), held.key(), heldFp, shortLeases)).lease();
    ScheduledExecutorService finisher = Executors.newSingleThreadScheduledExecutor();
    try {
      finisher.schedule(
          () -> holder.complete(UTF8.encode("held")), lease.toMillis() * 3, TimeUnit.MILLISECONDS);
      RecordId won = Samples.newId();
      Fingerprint wonFp = Samples.newFingerprint();

      List<Admission> admissions =
          once.beginAll(
              List.of(
                  new Claim(held.scope(), held.key(), heldFp),
                  new Claim(won.scope(), won.key(), wonFp)),
              shortLeases.toBuilder()
                  .inFlight(InFlightPolicy.waitUpTo(lease.multipliedBy(10)))
                  .build());

      assertThat(admissions.get(0)).isInstanceOf(Admission.Replay.class);
      assertThat(admissions.get(1)).isInstanceOf(Admission.Proceed.class);
      Lease wonLease = ((Admission.Proceed) admissions.get(1)).lease();
      assertThat(wonLease.leaseLost()).as("lease lost").isFalse();
      assertThat(underlying.get(won).orElseThrow().token()).isEqualTo(wonLease.token());
      assertThat(wonLease.complete(UTF8.encode("won"))).isEqualTo(Recording.RECORDED);
    } finally {
      finisher.shutdownNow();
    }
  }

  /**
   * A lease finished after {@link Once#close()} is still recorded: the store executor it would use
   * was shut down, and a refused finishing write would leave work that ran to run again.
   */
  @Test
  void anAsyncFinishAfterCloseIsStillRecorded() throws Exception {
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    Lease lease = proceed(once.beginAsync(id.scope(), id.key(), fp, policy()));
    once.close();

    assertThat(await(lease.completeAsync(UTF8.encode("after close"))))
        .isEqualTo(Recording.RECORDED);
    assertThat(underlying.get(id).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
  }

  /**
   * An Error from a codec or a classifier (an AssertionError, an OutOfMemoryError while encoding)
   * reaches the caller only after the lease is finished: the work ran, so the key is done, not left
   * in flight under heartbeats until the engine closes.
   */
  @Test
  void anErrorFromACodecOrAClassifierFinishesTheLeaseBeforeItIsRethrown() throws Exception {
    ResultCodec<String> brokenCodec =
        new ResultCodec<>() {
          @Override
          public byte[] encode(String value) {
            throw new AssertionError("codec bug");
          }

          @Override
          public String decode(byte[] bytes) {
            return UTF8.decode(bytes);
          }
        };
    OutcomeClassifier<String> brokenClassifier =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classify(String result) {
            throw new AssertionError("classifier bug");
          }
        };
    for (boolean async : new boolean[] {false, true}) {
      for (int which = 0; which < 2; which++) {
        RecordId id = Samples.newId();
        Fingerprint fp = Samples.newFingerprint();
        ResultCodec<String> codec = which == 0 ? brokenCodec : UTF8;
        OutcomeClassifier<String> classifier =
            which == 0 ? OutcomeClassifier.defaults() : brokenClassifier;
        if (async) {
          assertThatThrownBy(
                  () ->
                      await(
                          once.executeAsync(
                              id.scope(),
                              id.key(),
                              fp,
                              codec,
                              classifier,
                              policy(),
                              ctx -> CompletableFuture.completedFuture(run()))))
              .hasRootCauseInstanceOf(AssertionError.class);
        } else {
          assertThatThrownBy(
                  () ->
                      once.execute(
                          id.scope(), id.key(), fp, codec, classifier, policy(), ctx -> run()))
              .isInstanceOf(AssertionError.class);
        }
        assertThat(underlying.get(id).orElseThrow().state())
            .as("async %s, %s", async, which == 0 ? "codec" : "classifier")
            .isEqualTo(RecordState.COMPLETED);
        assertThat(once.execute(id.scope(), id.key(), fp, UTF8, ctx -> run()))
            .isInstanceOf(ExecutionResult.ResponseUnavailable.class);
      }
    }
  }

  /**
   * A give-back that ends the lease (the holder checkpointed) while a heartbeat of that lease is on
   * its way to the store: the beat must not land after the end and extend the lease again, or the
   * hand-over would wait a whole lease.
   */
  @Test
  void aGiveBackEndsTheLeaseAfterTheHeartbeatUnderWayNotBeforeIt() throws Exception {
    assumeEndsLeases();
    Duration lease = Duration.ofSeconds(3);
    ExecutionPolicy policy = policy().toBuilder().lease(lease).build();
    RecordId id = Samples.newId();
    Fingerprint fp = Samples.newFingerprint();
    store.latency(Duration.ofMillis(400), Call.HEARTBEAT);
    Lease held = ((Admission.Proceed) once.begin(id.scope(), id.key(), fp, policy)).lease();
    held.checkpoint(UTF8.encode("step 1"));
    int answered = store.answered(Call.HEARTBEAT);
    Eventually.assertThat(
        "a heartbeat under way",
        Duration.ofSeconds(5),
        () -> store.calls(Call.HEARTBEAT) > answered);

    held.giveBack();
    // The beat has landed by now (whichever came first, it or the end of the lease).
    Eventually.assertThat(
        "the heartbeat answered",
        Duration.ofSeconds(5),
        () -> store.answered(Call.HEARTBEAT) > answered);

    Admission next = once.begin(id.scope(), id.key(), fp, policy);
    assertThat(next)
        .as("the next claim takes the key over at once")
        .isInstanceOf(Admission.Proceed.class);
    Lease thief = ((Admission.Proceed) next).lease();
    assertThat(thief.stolen()).isTrue();
    thief.complete(UTF8.encode("done"));
  }

  /**
   * A give-back whose hand-over meets a store fault (the holder checkpointed, so the record must
   * outlive the attempt and its lease is ended, not released). The caller is answered {@link
   * Recording#UNKNOWN} either way. Where the end of the lease did not reach the store, the key
   * waits for its lease as after an abandon, and nobody takes it over before; where it took effect
   * and only its reply was lost, the next claim takes the key over at once. Either way the taker
   * resumes from the recovery point.
   */
  @Test
  void aGiveBackWhoseHandOverMeetsAFaultLeavesTheKeyToItsLeaseOrHandsItOver() throws Exception {
    assumeEndsLeases();
    // Long enough that the claim just after the give-back surely meets the lease still running.
    ExecutionPolicy policy = policy().toBuilder().lease(shortLease().multipliedBy(2)).build();
    for (boolean reachedTheStore : new boolean[] {false, true}) {
      for (boolean async : new boolean[] {false, true}) {
        String round = (reachedTheStore ? "reply lost" : "store down") + (async ? ", async" : "");
        RecordId id = Samples.newId();
        Fingerprint fp = Samples.newFingerprint();
        Admission first =
            async
                ? await(once.beginAsync(id.scope(), id.key(), fp, policy))
                : once.begin(id.scope(), id.key(), fp, policy);
        assertThat(first).as(round).isInstanceOf(Admission.Proceed.class);
        Lease held = ((Admission.Proceed) first).lease();
        held.checkpoint(UTF8.encode("step 1"));
        if (reachedTheStore) {
          store.loseReplies(Call.END_LEASE);
        } else {
          store.down(Call.END_LEASE);
        }
        int tried = store.calls(Call.END_LEASE);

        Recording given = async ? await(held.giveBackAsync()) : held.giveBack();
        store.heal();

        assertThat(given).as(round).isEqualTo(Recording.UNKNOWN);
        assertThat(store.calls(Call.END_LEASE))
            .as("%s: the hand-over was tried", round)
            .isEqualTo(tried + 1);
        Admission next = once.begin(id.scope(), id.key(), fp, policy);
        if (!reachedTheStore) {
          assertThat(next)
              .as("%s: the lease still runs", round)
              .isInstanceOf(Admission.InFlight.class);
          next = afterTheLease(round + ": the lease ends", id, fp, policy);
        }
        assertResumesFromStepOne(round + ": the key taken over", next);
      }
    }
  }

  /**
   * A batch claimed whole by the store, whose engine closes while the store claims it: no claim of
   * it reaches a caller, so each is given back — the fresh one released, the stolen ones (their
   * holders before checkpointed) handed over by ending their leases. Where that hand-over meets an
   * outage, the stolen keys wait for the batch's lease and nobody takes them over before; where
   * only its reply was lost, they are taken over at once. Either way the taker resumes from the
   * recovery point, and the fresh key is free at once. The first claim of the batch is given back
   * by its lease, the last by the batch (DESIGN §2: release only what provably did not run).
   */
  @Test
  void aBatchGivenBackWhoseHandOverMeetsAFaultLeavesItsStolenKeysToTheirLeaseOrHandsThemOver()
      throws Exception {
    assumeEndsLeases();
    store.gathering(); // the batch reaches the store's own batch claim, as one call
    ExecutionPolicy policy = policy().toBuilder().lease(shortLease().multipliedBy(2)).build();
    ExecutorService caller = Executors.newSingleThreadExecutor();
    try {
      for (boolean reachedTheStore : new boolean[] {false, true}) {
        String round = reachedTheStore ? "reply lost" : "store down";
        List<RecordId> keys = List.of(Samples.newId(), Samples.newId(), Samples.newId());
        List<RecordId> stolen = List.of(keys.get(0), keys.get(2));
        Fingerprint fp = Samples.newFingerprint();
        for (RecordId id : stolen) {
          Admission before = once.begin(id.scope(), id.key(), fp, policy);
          Lease held = ((Admission.Proceed) before).lease();
          held.checkpoint(UTF8.encode("step 1"));
          held.giveBack(); // the record, recovery point and all, waits for the next claim
        }
        if (reachedTheStore) {
          store.loseReplies(Call.END_LEASE);
        } else {
          store.down(Call.END_LEASE);
        }
        int claims = store.calls(Call.CLAIM);
        int tried = store.calls(Call.END_LEASE);
        store.pause(Call.CLAIM);
        try (Once closing = Once.of(store)) {
          Future<List<Admission>> batch =
              caller.submit(
                  () ->
                      closing.beginAll(
                          keys.stream().map(id -> new Claim(id.scope(), id.key(), fp)).toList(),
                          policy));
          Eventually.assertThat(
              round + ": the batch reaches the store",
              Duration.ofSeconds(10),
              () -> store.calls(Call.CLAIM) > claims);
          closing.close(); // while the store claims the batch; closing again at the end is a no-op
          store.heal(Call.CLAIM);

          assertThatThrownBy(() -> batch.get(30, TimeUnit.SECONDS))
              .as(round)
              .hasCauseInstanceOf(IllegalStateException.class);
        } finally {
          store.heal();
        }
        assertThat(store.claimBatches().get(store.claimBatches().size() - 1))
            .as("%s: one batch", round)
            .isEqualTo(keys);
        assertThat(store.calls(Call.END_LEASE))
            .as("%s: both hand-overs were tried", round)
            .isEqualTo(tried + 2);
        assertThat(underlying.get(keys.get(1))).as("%s: the fresh claim released", round).isEmpty();
        if (!reachedTheStore) {
          for (RecordId id : stolen) {
            assertThat(once.begin(id.scope(), id.key(), fp, policy))
                .as("%s: the batch's lease still runs on %s", round, id)
                .isInstanceOf(Admission.InFlight.class);
          }
        }
        for (RecordId id : stolen) {
          Admission next =
              reachedTheStore
                  ? once.begin(id.scope(), id.key(), fp, policy) // at once
                  : afterTheLease(round + ": the batch's lease ends on " + id, id, fp, policy);
          assertResumesFromStepOne(round + ": " + id + " taken over", next);
        }
        Admission fresh = once.begin(keys.get(1).scope(), keys.get(1).key(), fp, policy);
        assertThat(fresh).as(round).isInstanceOf(Admission.Proceed.class);
        assertThat(((Admission.Proceed) fresh).lease().stolen()).as(round).isFalse();
        ((Admission.Proceed) fresh).lease().complete(UTF8.encode("done"));
      }
    } finally {
      caller.shutdownNow();
    }
  }

  /**
   * Claims the key again until its lease has ended (within three leases), and answers the first
   * admission that is not in flight.
   */
  private Admission afterTheLease(
      String what, RecordId id, Fingerprint fp, ExecutionPolicy policy) {
    Admission[] later = {null};
    Eventually.assertThat(
        what,
        policy.lease().multipliedBy(3),
        () ->
            !((later[0] = once.begin(id.scope(), id.key(), fp, policy))
                instanceof Admission.InFlight));
    return Objects.requireNonNull(later[0]);
  }

  /** Asserts the admission took the key over where its holder had saved "step 1", and finishes. */
  private static void assertResumesFromStepOne(String what, Admission next) {
    assertThat(next).as(what).isInstanceOf(Admission.Proceed.class);
    Lease taker = ((Admission.Proceed) next).lease();
    assertThat(taker.stolen()).as(what).isTrue();
    assertThat(taker.recoveryPoint().map(UTF8::decode)).as(what).contains("step 1");
    taker.complete(UTF8.encode("done"));
  }

  /** Skips a test of ending leases early on a store that does not. */
  private void assumeEndsLeases() {
    RecordId probe = Samples.newId();
    long probeToken =
        ((ClaimResult.Claimed)
                underlying.claim(
                    new dev.once.store.ClaimRequest(
                        probe, Samples.newFingerprint(), shortLease(), Duration.ofHours(1))))
            .token();
    assumeTrue(underlying.endLease(probe, probeToken), "the store does not end leases early");
  }

  /**
   * A request whose fingerprint is of a newer version takes over an ended lease of a record written
   * under the version before (its retry after an upgrade): the record is compared under its own
   * version, so the key is not stranded "in flight" until it expires.
   */
  @Test
  void aRetryOfANewerFingerprintVersionTakesOverAnEndedLeaseOfTheOlderOne() throws Exception {
    RecordId id = Samples.newId();
    Fingerprint v1 = new Fingerprint(1, Samples.newFingerprint().hex());
    Fingerprint v2 = new Fingerprint(2, Samples.newFingerprint().hex(), v1);
    underlying.claim(new dev.once.store.ClaimRequest(id, v1, shortLease(), Duration.ofHours(1)));
    Thread.sleep(shortLease().toMillis() + 50);

    for (boolean async : new boolean[] {false, true}) {
      Admission admission =
          async
              ? await(once.beginAsync(id.scope(), id.key(), v2, policy()))
              : once.begin(id.scope(), id.key(), v2, policy());
      assertThat(admission).as("async %s", async).isInstanceOf(Admission.Proceed.class);
      Lease lease = ((Admission.Proceed) admission).lease();
      assertThat(lease.stolen()).isTrue();
      if (!async) {
        // Leave it to end again, for the asynchronous round.
        lease.abandon();
        underlying.endLease(id, lease.token());
        Thread.sleep(shortLease().toMillis() + 50);
      } else {
        lease.complete(UTF8.encode("done"));
      }
    }
    assertThat(once.execute(id.scope(), id.key(), v2, UTF8, ctx -> run()))
        .isInstanceOf(ExecutionResult.Replayed.class);
  }

  private static Lease proceed(CompletionStage<Admission> admission) throws Exception {
    Admission a = await(admission);
    assertThat(a).isInstanceOf(Admission.Proceed.class);
    return ((Admission.Proceed) a).lease();
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private ExecutionPolicy policy() {
    return once.defaults();
  }

  private String run() {
    return "run " + runs.incrementAndGet();
  }
}

package dev.once.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Admission;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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

package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class OnceTest {

  private static final Scope SCOPE = Scope.of("merchant-1", "POST /payments");
  private static final Fingerprint FP = new Fingerprint(1, "aa".repeat(32));
  private static final Fingerprint OTHER_FP = new Fingerprint(1, "bb".repeat(32));

  /** A lease no test waits out. */
  private static final ExecutionPolicy LONG_LEASE =
      ExecutionPolicy.builder().lease(Duration.ofMinutes(30)).heartbeat(false).build();

  private final ParkingSignalStore store = new ParkingSignalStore();
  private final RecordingListener listener = new RecordingListener();
  private final Once once = Once.builder(store).listener(listener).build();
  private final AtomicInteger runs = new AtomicInteger();

  @AfterEach
  void close() {
    once.close();
  }

  private static IdempotencyKey newKey() {
    return IdempotencyKey.of(UUID.randomUUID().toString());
  }

  private ExecutionResult<String> charge(IdempotencyKey key, Fingerprint fp) {
    return once.execute(
        SCOPE, key, fp, ResultCodec.utf8(), ctx -> "charge-" + runs.incrementAndGet());
  }

  @Test
  void firstCallExecutesAndRecords() {
    ExecutionResult<String> r = charge(newKey(), FP);

    assertThat(r)
        .isEqualTo(
            new ExecutionResult.Executed<>("charge-1", Outcome.COMPLETED, Recording.RECORDED));
  }

  @Test
  void retryReplaysTheFirstResultWithoutRunningAgain() {
    IdempotencyKey key = newKey();
    charge(key, FP);

    ExecutionResult<String> retry = charge(key, FP);

    assertThat(retry).isEqualTo(new ExecutionResult.Replayed<>("charge-1", Outcome.COMPLETED));
    assertThat(runs).hasValue(1);
    assertThat(listener.events).anyMatch(e -> e instanceof OnceEvent.Replayed);
  }

  @Test
  void retryWithADifferentRequestIsAMismatchAndNeverSeesTheResult() {
    IdempotencyKey key = newKey();
    charge(key, FP);

    ExecutionResult<String> reuse = charge(key, OTHER_FP);

    assertThat(reuse).isInstanceOf(ExecutionResult.FingerprintMismatch.class);
    assertThat(runs).hasValue(1);
  }

  @Test
  void aRecordWrittenUnderTheOldFingerprintVersionIsReplayedToTheSameRequestOnly() {
    IdempotencyKey key = newKey();
    Fingerprint v1 = new Fingerprint(1, "11".repeat(32));
    charge(key, v1); // written before the upgrade
    Fingerprint sameRequestNow = new Fingerprint(2, "22".repeat(32), v1);
    Fingerprint otherRequestNow =
        new Fingerprint(2, "33".repeat(32), new Fingerprint(1, "44".repeat(32)));

    assertThat(charge(key, sameRequestNow))
        .isEqualTo(new ExecutionResult.Replayed<>("charge-1", Outcome.COMPLETED));
    assertThat(charge(key, otherRequestNow))
        .isInstanceOf(ExecutionResult.FingerprintMismatch.class);
    assertThat(runs).hasValue(1);
  }

  @Test
  void sameKeyInAnotherScopeIsAnotherOperation() {
    IdempotencyKey key = newKey();
    charge(key, FP);

    ExecutionResult<String> other =
        once.execute(
            Scope.of("merchant-2", "POST /payments"),
            key,
            FP,
            ResultCodec.utf8(),
            ctx -> "charge-" + runs.incrementAndGet());

    assertThat(other)
        .isEqualTo(
            new ExecutionResult.Executed<>("charge-2", Outcome.COMPLETED, Recording.RECORDED));
  }

  @Test
  void duplicateWhileTheFirstRunsIsToldToRetryAfterTheRemainingLease() throws Exception {
    IdempotencyKey key = newKey();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<ExecutionResult<String>> first =
          pool.submit(
              () ->
                  once.execute(
                      SCOPE,
                      key,
                      FP,
                      ResultCodec.utf8(),
                      ctx -> {
                        started.countDown();
                        finish.await();
                        return "first";
                      }));
      started.await();

      ExecutionResult<String> dup = charge(key, FP);

      assertThat(dup).isInstanceOf(ExecutionResult.InFlight.class);
      Duration retryAfter = ((ExecutionResult.InFlight<String>) dup).retryAfter();
      assertThat(retryAfter).isBetween(Duration.ofSeconds(1), once.defaults().lease());
      finish.countDown();
      assertThat(first.get()).isInstanceOf(ExecutionResult.Executed.class);
      assertThat(charge(key, FP))
          .isEqualTo(new ExecutionResult.Replayed<>("first", Outcome.COMPLETED));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void inWaitModeADuplicateGetsTheFirstResultWhenItFinishes() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy waiting =
        ExecutionPolicy.builder().inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(10))).build();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      pool.submit(
          () ->
              once.execute(
                  SCOPE,
                  key,
                  FP,
                  ResultCodec.utf8(),
                  OutcomeClassifier.defaults(),
                  waiting,
                  ctx -> {
                    started.countDown();
                    finish.await();
                    return "first";
                  }));
      started.await();
      Future<ExecutionResult<String>> dup =
          pool.submit(
              () ->
                  once.execute(
                      SCOPE,
                      key,
                      FP,
                      ResultCodec.utf8(),
                      OutcomeClassifier.defaults(),
                      waiting,
                      ctx -> "second"));

      finish.countDown();

      assertThat(dup.get(10, TimeUnit.SECONDS))
          .isEqualTo(new ExecutionResult.Replayed<>("first", Outcome.COMPLETED));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void inWaitModeADuplicateGivesUpAtItsDeadline() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy waiting =
        ExecutionPolicy.builder().inFlight(InFlightPolicy.waitUpTo(Duration.ofMillis(200))).build();
    Lease held = ((Admission.Proceed) once.begin(SCOPE, key, FP, once.defaults())).lease();

    ExecutionResult<String> dup =
        once.execute(
            SCOPE,
            key,
            FP,
            ResultCodec.utf8(),
            OutcomeClassifier.defaults(),
            waiting,
            ctx -> "second");

    assertThat(dup).isInstanceOf(ExecutionResult.InFlight.class);
    held.release();
  }

  @Test
  void inWaitModeADuplicateRunsItselfWhenTheFirstReleasesTheKey() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy waiting =
        ExecutionPolicy.builder().inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(10))).build();
    Lease held = ((Admission.Proceed) once.begin(SCOPE, key, FP, once.defaults())).lease();
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<ExecutionResult<String>> dup =
          pool.submit(
              () ->
                  once.execute(
                      SCOPE,
                      key,
                      FP,
                      ResultCodec.utf8(),
                      OutcomeClassifier.defaults(),
                      waiting,
                      ctx -> "second"));
      store.awaitParked(Duration.ofSeconds(10)); // the duplicate waits for the key

      held.release();

      assertThat(dup.get(10, TimeUnit.SECONDS))
          .isEqualTo(
              new ExecutionResult.Executed<>("second", Outcome.COMPLETED, Recording.RECORDED));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void transientExceptionReleasesTheKeyAndPropagates() {
    IdempotencyKey key = newKey();

    assertThatThrownBy(
            () ->
                once.execute(
                    SCOPE,
                    key,
                    FP,
                    ResultCodec.utf8(),
                    ctx -> {
                      throw new IllegalStateException("downstream timed out");
                    }))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("downstream timed out");

    assertThat(store.get(RecordId.of(SCOPE, key))).isEmpty();
    assertThat(charge(key, FP)).isInstanceOf(ExecutionResult.Executed.class);
  }

  /**
   * A transient failure after a checkpoint: the steps before the checkpoint had their effects, so
   * the key is not released (which would delete the recovery point and make the retry repeat them)
   * but handed over: its lease ends at once, and the retry steals it and resumes without waiting
   * for the lease.
   */
  @Test
  void aTransientFailureAfterACheckpointHandsTheKeyOverAndTheRetryResumesAtOnce() {
    IdempotencyKey key = newKey();

    assertThatThrownBy(
            () ->
                once.execute(
                    SCOPE,
                    key,
                    FP,
                    ResultCodec.utf8(),
                    OutcomeClassifier.defaults(),
                    LONG_LEASE,
                    ctx -> {
                      ctx.checkpoint("charged".getBytes(StandardCharsets.UTF_8));
                      throw new IllegalStateException("the receipt service timed out");
                    }))
        .hasMessage("the receipt service timed out");

    IdempotencyRecord left = store.get(RecordId.of(SCOPE, key)).orElseThrow();
    assertThat(left.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(left.recoveryPoint()).isEqualTo("charged".getBytes(StandardCharsets.UTF_8));
    ExecutionResult<String> retry =
        once.execute(
            SCOPE,
            key,
            FP,
            ResultCodec.utf8(),
            OutcomeClassifier.defaults(),
            LONG_LEASE,
            ctx -> new String(ctx.recoveryPoint().orElseThrow(), StandardCharsets.UTF_8));
    assertThat(retry)
        .isEqualTo(
            new ExecutionResult.Executed<>("charged", Outcome.COMPLETED, Recording.RECORDED));
  }

  /**
   * A transient failure under a stolen lease: the holder before may have had its effect, so the key
   * is handed over, not released, and the retry still learns that it took a lease over.
   */
  @Test
  void aTransientFailureUnderAStolenLeaseHandsTheKeyOver() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy shortLease =
        ExecutionPolicy.builder().lease(Duration.ofMillis(100)).heartbeat(false).build();
    ((Admission.Proceed) once.begin(SCOPE, key, FP, shortLease)).lease().abandon();
    Thread.sleep(150);

    assertThatThrownBy(
            () ->
                once.execute(
                    SCOPE,
                    key,
                    FP,
                    ResultCodec.utf8(),
                    OutcomeClassifier.defaults(),
                    LONG_LEASE,
                    ctx -> {
                      throw new IllegalStateException("downstream timed out");
                    }))
        .hasMessage("downstream timed out");

    assertThat(store.get(RecordId.of(SCOPE, key)).orElseThrow().state())
        .isEqualTo(RecordState.IN_PROGRESS);
    assertThat(
            once.execute(
                SCOPE,
                key,
                FP,
                ResultCodec.utf8(),
                OutcomeClassifier.defaults(),
                LONG_LEASE,
                ctx -> "stolen " + ctx.stolen()))
        .isEqualTo(
            new ExecutionResult.Executed<>("stolen true", Outcome.COMPLETED, Recording.RECORDED));
  }

  /**
   * A duplicate waiting for the first request is told when that request hands the key over, and
   * takes it over at once (stolen, from the recovery point) rather than when the lease would have
   * ended, long after its own wait.
   */
  @Test
  void aWaitingDuplicateTakesOverAKeyHandedOverAtOnce() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy waiting =
        ExecutionPolicy.builder()
            .lease(Duration.ofMinutes(30))
            .heartbeat(false)
            .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(10)))
            .build();
    InMemoryStore records = InMemoryStore.create();
    Semaphore claims = new Semaphore(0);
    IdempotencyStore counting =
        new ForwardingStore() {
          @Override
          protected IdempotencyStore delegate() {
            return records;
          }

          @Override
          public ClaimResult claim(ClaimRequest request) {
            ClaimResult result = records.claim(request);
            claims.release();
            return result;
          }
        };
    try (Once engine = Once.of(counting)) {
      Lease first = ((Admission.Proceed) engine.begin(SCOPE, key, FP, waiting)).lease();
      first.checkpoint("charged".getBytes(StandardCharsets.UTF_8));
      claims.drainPermits();
      CompletableFuture<Admission> duplicate =
          engine.beginAsync(SCOPE, key, FP, waiting).toCompletableFuture();
      // Its claim, then its claim again once subscribed to changes: it now waits for one.
      assertThat(claims.tryAcquire(2, 10, TimeUnit.SECONDS)).isTrue();

      assertThat(first.giveBack()).isEqualTo(Recording.UNKNOWN);

      Admission taken = duplicate.get(10, TimeUnit.SECONDS);
      assertThat(taken).isInstanceOf(Admission.Proceed.class);
      Lease second = ((Admission.Proceed) taken).lease();
      assertThat(second.stolen()).isTrue();
      assertThat(second.recoveryPoint())
          .hasValueSatisfying(
              point -> assertThat(point).isEqualTo("charged".getBytes(StandardCharsets.UTF_8)));
      second.release();
    }
  }

  /**
   * The hand-over is a courtesy: a store that fails it leaves the lease to end by itself, and the
   * transient failure still reaches the caller as it is.
   */
  @Test
  void aGiveBackWhoseHandOverFailsLeavesTheKeyToItsLease() {
    IdempotencyKey key = newKey();
    IdempotencyStore cannotEndLeases =
        new ForwardingStore() {
          @Override
          protected IdempotencyStore delegate() {
            return store;
          }

          @Override
          public boolean endLease(RecordId id, long token) {
            throw new StoreUnavailableException("down as the lease is handed over");
          }
        };
    try (Once handsNothingOver = Once.of(cannotEndLeases)) {
      assertThatThrownBy(
              () ->
                  handsNothingOver.execute(
                      SCOPE,
                      key,
                      FP,
                      ResultCodec.utf8(),
                      OutcomeClassifier.defaults(),
                      LONG_LEASE,
                      ctx -> {
                        ctx.checkpoint("charged".getBytes(StandardCharsets.UTF_8));
                        throw new IllegalStateException("the receipt service timed out");
                      }))
          .hasMessage("the receipt service timed out");

      assertThat(handsNothingOver.begin(SCOPE, key, FP, LONG_LEASE))
          .isInstanceOf(Admission.InFlight.class);
    }
  }

  @Test
  void checkedExceptionIsWrappedAfterTheRelease() {
    IdempotencyKey key = newKey();

    assertThatThrownBy(
            () ->
                once.execute(
                    SCOPE,
                    key,
                    FP,
                    ResultCodec.utf8(),
                    ctx -> {
                      throw new IOException("connection reset");
                    }))
        .isInstanceOf(OperationFailedException.class)
        .hasCauseInstanceOf(IOException.class);

    assertThat(store.get(RecordId.of(SCOPE, key))).isEmpty();
  }

  @Test
  void finalFailureIsRecordedAndReplayed() {
    IdempotencyKey key = newKey();
    Operation<String> declined =
        ctx -> {
          runs.incrementAndGet();
          throw new FinalFailure("insufficient-funds", "balance 3.00 < 10.00");
        };

    ExecutionResult<String> first = once.execute(SCOPE, key, FP, ResultCodec.utf8(), declined);
    ExecutionResult<String> retry = once.execute(SCOPE, key, FP, ResultCodec.utf8(), declined);

    assertThat(first)
        .isInstanceOfSatisfying(
            ExecutionResult.Failed.class,
            f -> {
              assertThat(f.failure().code()).isEqualTo("insufficient-funds");
              assertThat(f.failure().replayed()).isFalse();
            });
    assertThat(retry)
        .isInstanceOfSatisfying(
            ExecutionResult.Failed.class,
            f -> {
              assertThat(f.failure().code()).isEqualTo("insufficient-funds");
              assertThat(f.failure().getMessage()).isEqualTo("balance 3.00 < 10.00");
              assertThat(f.failure().replayed()).isTrue();
            });
    assertThat(runs).hasValue(1);
  }

  @Test
  void classifierCanMakeAnExceptionFinal() {
    IdempotencyKey key = newKey();
    OutcomeClassifier<String> validationIsFinal =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classifyError(Throwable error) {
            return error instanceof IllegalArgumentException
                ? Outcome.FAILED_FINAL
                : Outcome.TRANSIENT;
          }
        };

    ExecutionResult<String> r =
        once.execute(
            SCOPE,
            key,
            FP,
            ResultCodec.utf8(),
            validationIsFinal,
            once.defaults(),
            ctx -> {
              throw new IllegalArgumentException("amount must be positive");
            });

    assertThat(r)
        .isInstanceOfSatisfying(
            ExecutionResult.Failed.class,
            f ->
                assertThat(f.failure().code()).isEqualTo(IllegalArgumentException.class.getName()));
    assertThat(store.get(RecordId.of(SCOPE, key)))
        .hasValueSatisfying(rec -> assertThat(rec.state()).isEqualTo(RecordState.FAILED_FINAL));
  }

  @Test
  void valueClassifiedTransientIsReturnedButNotRecorded() {
    IdempotencyKey key = newKey();
    OutcomeClassifier<String> statusCodes =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classify(String result) {
            return result.startsWith("503")
                ? Outcome.TRANSIENT
                : result.startsWith("4") ? Outcome.FAILED_FINAL : Outcome.COMPLETED;
          }
        };

    ExecutionResult<String> r =
        once.execute(
            SCOPE, key, FP, ResultCodec.utf8(), statusCodes, once.defaults(), ctx -> "503 busy");
    ExecutionResult<String> again =
        once.execute(
            SCOPE,
            key,
            FP,
            ResultCodec.utf8(),
            statusCodes,
            once.defaults(),
            ctx -> "402 declined");
    ExecutionResult<String> replay =
        once.execute(
            SCOPE, key, FP, ResultCodec.utf8(), statusCodes, once.defaults(), ctx -> "201 ok");

    assertThat(r)
        .isEqualTo(
            new ExecutionResult.Executed<>("503 busy", Outcome.TRANSIENT, Recording.RELEASED));
    assertThat(again)
        .isEqualTo(
            new ExecutionResult.Executed<>(
                "402 declined", Outcome.FAILED_FINAL, Recording.RECORDED));
    assertThat(replay)
        .isEqualTo(new ExecutionResult.Replayed<>("402 declined", Outcome.FAILED_FINAL));
  }

  @Test
  void resultOverTheCapCountsAsDoneAndIsNeverRunAgain() {
    IdempotencyKey key = newKey();
    ExecutionPolicy small = ExecutionPolicy.builder().maxResultBytes(8).build();
    Operation<String> big = ctx -> "x".repeat(9 + runs.incrementAndGet() * 0);

    ExecutionResult<String> first =
        once.execute(SCOPE, key, FP, ResultCodec.utf8(), OutcomeClassifier.defaults(), small, big);
    ExecutionResult<String> retry =
        once.execute(SCOPE, key, FP, ResultCodec.utf8(), OutcomeClassifier.defaults(), small, big);

    assertThat(first)
        .isEqualTo(
            new ExecutionResult.Executed<>(
                "x".repeat(9), Outcome.COMPLETED, Recording.RESULT_NOT_STORED));
    assertThat(retry).isInstanceOf(ExecutionResult.ResponseUnavailable.class);
    assertThat(runs).hasValue(1);
  }

  @Test
  void resultTheStoreCannotKeepCountsAsDoneAndIsNeverRunAgain() {
    IdempotencyKey key = newKey();
    try (Once small = Once.of(new FakeSmallStore(InMemoryStore.create(), 16))) {
      Operation<String> big = ctx -> "payment-" + runs.incrementAndGet() + "-with-a-long-receipt";

      ExecutionResult<String> first = small.execute(SCOPE, key, FP, ResultCodec.utf8(), big);
      ExecutionResult<String> retry = small.execute(SCOPE, key, FP, ResultCodec.utf8(), big);

      assertThat(first)
          .isEqualTo(
              new ExecutionResult.Executed<>(
                  "payment-1-with-a-long-receipt", Outcome.COMPLETED, Recording.RESULT_NOT_STORED));
      assertThat(retry).isInstanceOf(ExecutionResult.ResponseUnavailable.class);
      assertThat(runs).hasValue(1);
    }
  }

  @Test
  void resultThatCannotBeEncodedCountsAsDone() {
    IdempotencyKey key = newKey();
    ResultCodec<String> broken =
        new ResultCodec<>() {
          @Override
          public byte[] encode(String value) {
            throw new IllegalStateException("not serialisable");
          }

          @Override
          public String decode(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
          }
        };

    ExecutionResult<String> first =
        once.execute(SCOPE, key, FP, broken, ctx -> "v" + runs.incrementAndGet());
    ExecutionResult<String> retry =
        once.execute(SCOPE, key, FP, broken, ctx -> "v" + runs.incrementAndGet());

    assertThat(first)
        .isEqualTo(
            new ExecutionResult.Executed<>("v1", Outcome.COMPLETED, Recording.RESULT_NOT_STORED));
    assertThat(retry).isInstanceOf(ExecutionResult.ResponseUnavailable.class);
  }

  @Test
  void aLeaseWhoseHolderDiedIsStolenWithItsRecoveryPoint() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy shortLease =
        ExecutionPolicy.builder().lease(Duration.ofMillis(100)).heartbeat(false).build();
    Lease dead = ((Admission.Proceed) once.begin(SCOPE, key, FP, shortLease)).lease();
    dead.checkpoint("step-1-done".getBytes(StandardCharsets.UTF_8));
    dead.abandon();
    Thread.sleep(150);

    ExecutionResult<String> r =
        once.execute(
            SCOPE,
            key,
            FP,
            ResultCodec.utf8(),
            OutcomeClassifier.defaults(),
            shortLease,
            ctx -> {
              assertThat(ctx.stolen()).isTrue();
              assertThat(ctx.token()).isGreaterThan(dead.token());
              return "resumed after "
                  + new String(ctx.recoveryPoint().orElseThrow(), StandardCharsets.UTF_8);
            });

    assertThat(r)
        .isEqualTo(
            new ExecutionResult.Executed<>(
                "resumed after step-1-done", Outcome.COMPLETED, Recording.RECORDED));
    assertThat(listener.events).anyMatch(e -> e instanceof OnceEvent.LeaseStolen);
  }

  @Test
  void aZombieCannotOverwriteTheNewOwnersRecord() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy shortLease =
        ExecutionPolicy.builder().lease(Duration.ofMillis(100)).heartbeat(false).build();
    Lease zombie = ((Admission.Proceed) once.begin(SCOPE, key, FP, shortLease)).lease();
    Thread.sleep(150);
    ExecutionResult<String> thief =
        once.execute(
            SCOPE,
            key,
            FP,
            ResultCodec.utf8(),
            OutcomeClassifier.defaults(),
            shortLease,
            ctx -> "thief");

    Recording late = zombie.complete("zombie".getBytes(StandardCharsets.UTF_8));

    assertThat(thief).isInstanceOf(ExecutionResult.Executed.class);
    assertThat(late).isEqualTo(Recording.LEASE_LOST);
    assertThat(charge(key, FP))
        .isEqualTo(new ExecutionResult.Replayed<>("thief", Outcome.COMPLETED));
    assertThat(listener.events).anyMatch(e -> e instanceof OnceEvent.LeaseLost);
  }

  @Test
  void checkpointAfterTheLeaseWasStolenTellsTheZombieToStop() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy shortLease =
        ExecutionPolicy.builder().lease(Duration.ofMillis(100)).heartbeat(false).build();
    Lease zombie = ((Admission.Proceed) once.begin(SCOPE, key, FP, shortLease)).lease();
    Thread.sleep(150);
    once.begin(SCOPE, key, FP, shortLease);

    assertThatThrownBy(() -> zombie.checkpoint(new byte[] {1}))
        .isInstanceOf(LeaseLostException.class);
    assertThat(zombie.leaseLost()).isTrue();
  }

  @Test
  void heartbeatKeepsALongOperationsLease() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy shortLease = ExecutionPolicy.builder().lease(Duration.ofMillis(150)).build();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<ExecutionResult<String>> slow =
          pool.submit(
              () ->
                  once.execute(
                      SCOPE,
                      key,
                      FP,
                      ResultCodec.utf8(),
                      OutcomeClassifier.defaults(),
                      shortLease,
                      ctx -> {
                        started.countDown();
                        finish.await();
                        return "slow";
                      }));
      started.await();
      Thread.sleep(600); // four leases long: only heartbeats keep it

      ExecutionResult<String> dup =
          once.execute(
              SCOPE,
              key,
              FP,
              ResultCodec.utf8(),
              OutcomeClassifier.defaults(),
              shortLease,
              ctx -> "stolen");

      assertThat(dup).isInstanceOf(ExecutionResult.InFlight.class);
      finish.countDown();
      assertThat(slow.get())
          .isEqualTo(new ExecutionResult.Executed<>("slow", Outcome.COMPLETED, Recording.RECORDED));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void failClosedRefusesWhenTheStoreIsDown() {
    try (Once down = Once.of(new FakeUnavailableStore())) {
      ExecutionResult<String> r =
          down.execute(
              SCOPE, newKey(), FP, ResultCodec.utf8(), ctx -> "ran" + runs.incrementAndGet());

      assertThat(r)
          .isInstanceOfSatisfying(
              ExecutionResult.StoreUnavailable.class,
              s -> assertThat(s.retryAfter()).isEqualTo(Duration.ofSeconds(1)));
      assertThat(runs).hasValue(0);
    }
  }

  @Test
  void failOpenRunsUnguardedWhenTheStoreIsDown() {
    ExecutionPolicy open = ExecutionPolicy.builder().failureMode(FailureMode.FAIL_OPEN).build();
    RecordingListener events = new RecordingListener();
    try (Once down =
        Once.builder(new FakeUnavailableStore()).defaults(open).listener(events).build()) {
      ExecutionResult<String> r =
          down.execute(SCOPE, newKey(), FP, ResultCodec.utf8(), ctx -> "ran");

      assertThat(r)
          .isEqualTo(new ExecutionResult.Executed<>("ran", Outcome.COMPLETED, Recording.UNGUARDED));
      assertThat(events.events).anyMatch(e -> e instanceof OnceEvent.FailOpen);
    }
  }

  @Test
  void failOpenWithABrokenClassifierStillReportsTheWorkThatRanAsCompleted() {
    ExecutionPolicy open = ExecutionPolicy.builder().failureMode(FailureMode.FAIL_OPEN).build();
    OutcomeClassifier<String> broken =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classify(String value) {
            throw new IllegalStateException("classifier bug");
          }
        };
    try (Once down = Once.builder(new FakeUnavailableStore()).defaults(open).build()) {
      ExecutionResult<String> r =
          down.execute(
              SCOPE,
              newKey(),
              FP,
              ResultCodec.utf8(),
              broken,
              open,
              ctx -> "ran-" + runs.incrementAndGet());

      assertThat(r)
          .isEqualTo(
              new ExecutionResult.Executed<>("ran-1", Outcome.COMPLETED, Recording.UNGUARDED));
    }
  }

  @Test
  void aHerdOfIdenticalRequestsRunsTheOperationOnce() throws Exception {
    IdempotencyKey key = newKey();
    ExecutionPolicy waiting =
        ExecutionPolicy.builder().inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(20))).build();
    int herd = 64;
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(herd);
    try {
      List<Future<ExecutionResult<String>>> results = new ArrayList<>();
      for (int i = 0; i < herd; i++) {
        results.add(
            pool.submit(
                () -> {
                  go.await();
                  return once.execute(
                      SCOPE,
                      key,
                      FP,
                      ResultCodec.utf8(),
                      OutcomeClassifier.defaults(),
                      waiting,
                      ctx -> {
                        Thread.sleep(20);
                        return "charge-" + runs.incrementAndGet();
                      });
                }));
      }
      go.countDown();
      int executed = 0;
      for (Future<ExecutionResult<String>> f : results) {
        ExecutionResult<String> r = f.get(20, TimeUnit.SECONDS);
        if (r instanceof ExecutionResult.Executed<String> e) {
          executed++;
          assertThat(e.value()).isEqualTo("charge-1");
        } else {
          assertThat(r).isEqualTo(new ExecutionResult.Replayed<>("charge-1", Outcome.COMPLETED));
        }
      }
      assertThat(executed).isEqualTo(1);
      assertThat(runs).hasValue(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void lowLevelLeaseCannotBeFinishedTwice() {
    Lease lease = ((Admission.Proceed) once.begin(SCOPE, newKey(), FP, once.defaults())).lease();
    lease.complete(new byte[] {1});

    assertThatThrownBy(() -> lease.release()).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void abandonedLeaseStaysInProgressUntilItEnds() {
    IdempotencyKey key = newKey();
    Lease lease = ((Admission.Proceed) once.begin(SCOPE, key, FP, once.defaults())).lease();

    lease.abandon();

    assertThat(once.begin(SCOPE, key, FP, once.defaults())).isInstanceOf(Admission.InFlight.class);
  }

  @Test
  void aClaimWonWhileTheEngineClosesIsReleasedWithoutBlockingTheStoresThread() throws Exception {
    HeldClaims held = new HeldClaims();
    Once closing = Once.builder(held).build();
    IdempotencyKey key = newKey();

    var admission = closing.beginAsync(SCOPE, key, FP, closing.defaults()).toCompletableFuture();
    closing.close();
    held.answerClaims();

    assertThatThrownBy(admission::join).hasCauseInstanceOf(IllegalStateException.class);
    assertThat(held.get(RecordId.of(SCOPE, key))).isEmpty();
    assertThat(held.blockingReleases).hasValue(0);
    assertThat(held.asyncReleases).hasValue(1);
  }

  @Test
  void aClaimWonWhileTheEngineClosesIsReleasedByABlockingCaller() throws Exception {
    HeldClaims held = new HeldClaims();
    Once closing = Once.builder(held).build();
    IdempotencyKey key = newKey();
    ExecutorService caller = Executors.newSingleThreadExecutor();
    try {
      Future<Admission> admission =
          caller.submit(() -> closing.begin(SCOPE, key, FP, closing.defaults()));
      held.awaitClaim();
      closing.close();
      held.answerClaims();

      assertThatThrownBy(() -> admission.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalStateException.class);
      assertThat(held.get(RecordId.of(SCOPE, key))).isEmpty();
      assertThat(held.blockingReleases).hasValue(1);
    } finally {
      caller.shutdownNow();
    }
  }

  /**
   * Holds every claim until {@link #answerClaims}, as a slow store would, and counts the releases
   * by kind: a release on the thread that answers an asynchronous claim must not block it.
   */
  private static final class HeldClaims extends dev.once.store.ForwardingStore {
    private final dev.once.store.InMemoryStore records = dev.once.store.InMemoryStore.create();
    private final CountDownLatch answer = new CountDownLatch(1);
    private final CountDownLatch claimed = new CountDownLatch(1);
    final AtomicInteger blockingReleases = new AtomicInteger();
    final AtomicInteger asyncReleases = new AtomicInteger();

    @Override
    protected dev.once.store.IdempotencyStore delegate() {
      return records;
    }

    void answerClaims() {
      answer.countDown();
    }

    void awaitClaim() throws InterruptedException {
      assertThat(claimed.await(10, TimeUnit.SECONDS)).as("a claim arrived").isTrue();
    }

    @Override
    public dev.once.store.ClaimResult claim(dev.once.store.ClaimRequest request) {
      claimed.countDown();
      try {
        assertThat(answer.await(10, TimeUnit.SECONDS)).as("the claim was answered").isTrue();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
      return records.claim(request);
    }

    @Override
    public java.util.concurrent.CompletionStage<dev.once.store.ClaimResult> claimAsync(
        dev.once.store.ClaimRequest request, java.util.concurrent.Executor blocking) {
      claimed.countDown();
      return java.util.concurrent.CompletableFuture.runAsync(
              () -> {
                try {
                  answer.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              })
          .thenCompose(v -> records.claimAsync(request, blocking));
    }

    @Override
    public boolean release(RecordId id, long token) {
      blockingReleases.incrementAndGet();
      return records.release(id, token);
    }

    @Override
    public java.util.concurrent.CompletionStage<Boolean> releaseAsync(
        RecordId id, long token, java.util.concurrent.Executor blocking) {
      asyncReleases.incrementAndGet();
      return records.releaseAsync(id, token, blocking);
    }
  }
}

package dev.once.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import dev.once.store.UnreadableRecordException;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * The contract every {@link IdempotencyStore} passes: the state machine, fencing, lease steal with
 * recovery point, expiry, purge, large and binary values, unicode scopes, and races.
 *
 * <p>A store proves itself by extending this class and supplying the store; every test here then
 * runs against it:
 *
 * <pre>{@code
 * class PostgresStoreContractTest extends IdempotencyStoreContract {
 *   @Override
 *   protected IdempotencyStore createStore() {
 *     return PostgresStore.builder(dataSource).build();
 *   }
 * }
 * }</pre>
 *
 * <p>Every test uses fresh random scopes, so a store may be shared between tests, runs and
 * machines, and nothing needs cleaning up. Tests of leases and expiry need time to pass on the
 * store's clock: by default they sleep (see {@link #advanceTime(Duration)}), with leases of {@link
 * #shortLease()}; a store whose clock can be injected overrides {@code advanceTime} with a {@link
 * FakeClock} and runs without sleeping. Tests run against the real server, never a mock.
 *
 * <p>The tests are grouped by concern in {@code @Nested} classes ({@code Claim}, {@code Heartbeat},
 * {@code Purge}, ...), so a report says which part of the contract a store breaks.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(IdempotencyStoreContract.NamesTheStore.class)
public abstract class IdempotencyStoreContract {

  /** A lease or TTL that never ends during a test. */
  protected static final Duration LONG = Duration.ofMinutes(30);

  private static final Duration TTL = Duration.ofHours(1);
  private static final int RACERS = 64;

  /** The store under test: a new one from {@link #createStore()} for each test, closed after it. */
  protected IdempotencyStore store;

  /**
   * Returns the store to test. Called before each test; it may return a new store or a shared one,
   * since tests never touch each other's records.
   */
  protected abstract IdempotencyStore createStore();

  /**
   * Lets at least {@code duration} pass on the store's clock. The default sleeps that long plus a
   * margin for clock granularity, which is all a real server allows; a store with an injected
   * {@link FakeClock} overrides this with {@link FakeClock#advance(Duration)}. Called from many
   * threads at once by the concurrent history test.
   */
  protected void advanceTime(Duration duration) {
    long millis = duration.toMillis() + Math.max(25, duration.toMillis() / 10);
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for the store's clock", e);
    }
  }

  /**
   * The lease and TTL used where a test waits for one to end: short, so tests against real servers
   * stay fast, yet long enough that the store answers well within it. Default 400 ms; a store whose
   * clock is coarse (whole seconds) returns something like 2 s.
   */
  protected Duration shortLease() {
    return Duration.ofMillis(400);
  }

  /**
   * The size of the large result and recovery point tests: 1 MiB and a bit by default, as the
   * design requires. Lower it only for a store that documents a smaller limit.
   */
  protected int largeValueBytes() {
    return (1 << 20) + 4099;
  }

  /**
   * The port on 127.0.0.1 of the server the store talks to, for the tests of a claim batch whose
   * connection breaks part-way; 0 (the default) skips them, for a store without a server (in
   * memory, embedded). A store that returns a port also overrides {@link
   * #createStoreThrough(FaultProxy)}.
   */
  protected int serverPort() {
    return 0;
  }

  /**
   * Turns the finished record at {@code id}, behind the store's back, into one this version cannot
   * read, as a later version sharing the store might write it: a state or a fingerprint in a form
   * this version does not know, the rest as this version writes it. Returns false (the default) for
   * a store that cannot hold such a record (in memory); the tests of {@code ForeignRecords} then do
   * not apply to it.
   */
  protected boolean makeForeign(RecordId id) {
    return false;
  }

  /**
   * Whether the store ends a lease early ({@link IdempotencyStore#endLease}), which is optional:
   * true by default, so that the kit checks it; a store that leaves the SPI's default (does
   * nothing, answers false) returns false here.
   */
  protected boolean endsLeases() {
    return true;
  }

  /**
   * A store over records no other test sees (a new table, key prefix or instance), on the same
   * clock as {@link #createStore()}'s, for the in-flight listing tests, which see every record in
   * the store; the test closes it. The default returns {@link #createStore()}, right for a store
   * that is new for each test; a store whose tests share records overrides it.
   */
  protected IdempotencyStore createIsolatedStore() {
    return createStore();
  }

  /**
   * A new store over the same records as {@link #createStore()}'s that reaches its server only
   * through {@code proxy}, a {@link FaultProxy} to {@link #serverPort()}; the test closes it.
   */
  protected IdempotencyStore createStoreThrough(FaultProxy proxy) {
    throw new UnsupportedOperationException(
        "a store whose serverPort() is not 0 overrides createStoreThrough");
  }

  @BeforeEach
  void openStoreUnderTest() {
    store = createStore();
    assertThat(store).as("createStore()").isNotNull();
  }

  @AfterEach
  void closeStoreUnderTest() {
    if (store != null) {
      store.close();
    }
  }

  /** Claims: a fresh lease, and what a claim on a live or finished record returns. */
  @Nested
  class Claim {

    @Test
    void aClaimOnAnAbsentKeyGrantsAFreshLease() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();

      Claimed claimed = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(claimed.stolen()).isFalse();
      assertThat(claimed.recoveryPoint()).isNull();
      IdempotencyRecord record = present(id);
      assertThat(record.id()).isEqualTo(id);
      assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(record.fingerprint()).isEqualTo(fingerprint);
      assertThat(record.token()).isEqualTo(claimed.token());
      assertThat(record.leaseUntil()).isEqualTo(claimed.leaseUntil());
      assertThat(record.result()).isNull();
      assertThat(record.recoveryPoint()).isNull();
    }

    @Test
    void getOnAnAbsentKeyIsEmpty() {
      assertThat(store.get(newId())).isEmpty();
    }

    @Test
    void aClaimOnALiveLeaseReturnsTheRecordAndChangesNothing() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed first = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      IdempotencyRecord before = present(id);

      IdempotencyRecord seen = existing(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(seen.state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(seen.token()).isEqualTo(first.token());
      assertThat(seen.isStealable()).isFalse();
      assertThat(seen.leaseRemaining()).isPositive();
      assertUnchanged(id, before);
    }

    @Test
    void aClaimWithAnotherFingerprintOnALiveLeaseReturnsTheRecordAndChangesNothing() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      IdempotencyRecord before = present(id);

      IdempotencyRecord seen = existing(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(seen.fingerprint()).isEqualTo(fingerprint);
      assertUnchanged(id, before);
    }

    @Test
    void aClaimOnACompletedRecordReturnsItWithItsResult() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      byte[] result = utf8("the first result");
      assertThat(store.complete(id, claimed.token(), result, TTL)).isTrue();

      IdempotencyRecord seen = existing(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(seen.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(seen.result()).isEqualTo(result);
      assertThat(seen.token()).isEqualTo(claimed.token());
      assertThat(seen.fingerprint()).isEqualTo(fingerprint);
    }

    @Test
    void aClaimOnAFailedFinalRecordReturnsItWithItsResult() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      byte[] result = utf8("insufficient funds");
      assertThat(store.failFinal(id, claimed.token(), result, TTL)).isTrue();

      IdempotencyRecord seen = existing(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(seen.state()).isEqualTo(RecordState.FAILED_FINAL);
      assertThat(seen.result()).isEqualTo(result);
    }

    @Test
    void aClaimWithAnotherFingerprintOnAFinishedRecordReturnsItUnchanged() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      assertThat(store.complete(id, claimed.token(), utf8("done"), TTL)).isTrue();
      IdempotencyRecord before = present(id);

      IdempotencyRecord seen = existing(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(seen.fingerprint()).isEqualTo(fingerprint);
      assertThat(seen.result()).isEqualTo(utf8("done"));
      assertUnchanged(id, before);
    }
  }

  /** Finishing a lease: complete and failFinal, their tokens, and what they leave. */
  @Nested
  class CompleteAndFailFinal {

    @Test
    void completeWithTheRightTokenStoresTheResult() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(store.complete(id, claimed.token(), utf8("201 Created"), TTL)).isTrue();

      IdempotencyRecord record = present(id);
      assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(record.result()).isEqualTo(utf8("201 Created"));
      assertThat(record.token()).isEqualTo(claimed.token());
      assertThat(record.fingerprint()).isEqualTo(fingerprint);
    }

    @Test
    void failFinalWithTheRightTokenStoresTheResult() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(store.failFinal(id, claimed.token(), utf8("422 Unprocessable"), TTL)).isTrue();

      IdempotencyRecord record = present(id);
      assertThat(record.state()).isEqualTo(RecordState.FAILED_FINAL);
      assertThat(record.result()).isEqualTo(utf8("422 Unprocessable"));
    }

    @Test
    void completeWithAWrongTokenIsRejectedAndChangesNothing() {
      assertWrongTokensAreRejected((id, token) -> store.complete(id, token, utf8("forged"), TTL));
    }

    @Test
    void failFinalWithAWrongTokenIsRejectedAndChangesNothing() {
      assertWrongTokensAreRejected((id, token) -> store.failFinal(id, token, utf8("forged"), TTL));
    }

    @Test
    void releaseWithAWrongTokenIsRejectedAndChangesNothing() {
      assertWrongTokensAreRejected(store::release);
    }

    @Test
    void heartbeatWithAWrongTokenIsRejectedAndChangesNothing() {
      assertWrongTokensAreRejected((id, token) -> store.heartbeat(id, token, LONG.multipliedBy(2)));
    }

    @Test
    void checkpointWithAWrongTokenIsRejectedAndChangesNothing() {
      assertWrongTokensAreRejected(
          (id, token) -> store.checkpoint(id, token, utf8("forged"), LONG.multipliedBy(2)));
    }

    @Test
    void writesToAnAbsentKeyAreRejectedAndCreateNothing() {
      RecordId id = newId();

      assertThat(store.complete(id, 1, utf8("x"), TTL)).as("complete").isFalse();
      assertThat(store.failFinal(id, 1, utf8("x"), TTL)).as("failFinal").isFalse();
      assertThat(store.heartbeat(id, 1, LONG)).as("heartbeat").isFalse();
      assertThat(store.checkpoint(id, 1, utf8("x"), LONG)).as("checkpoint").isFalse();
      assertThat(store.release(id, 1)).as("release").isFalse();

      assertThat(store.get(id)).isEmpty();
      assertThat(claimed(store.claim(request(id, newFingerprint(), LONG, TTL))).stolen()).isFalse();
    }

    @Test
    void aSecondCompletionIsRejectedAndTheFirstResultStays() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      assertThat(store.complete(id, claimed.token(), utf8("first"), TTL)).isTrue();
      IdempotencyRecord before = present(id);

      assertThat(store.complete(id, claimed.token(), utf8("second"), TTL)).isFalse();

      assertUnchanged(id, before);
      assertThat(present(id).result()).isEqualTo(utf8("first"));
    }

    @Test
    void noWriteSucceedsOnACompletedRecord() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      assertThat(store.complete(id, claimed.token(), utf8("done"), TTL)).isTrue();

      assertNoWriteSucceeds(id, claimed.token());
    }

    @Test
    void noWriteSucceedsOnAFailedFinalRecord() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      assertThat(store.failFinal(id, claimed.token(), utf8("declined"), TTL)).isTrue();

      assertNoWriteSucceeds(id, claimed.token());
    }

    @Test
    void aWriteWithTheRightTokenSucceedsAfterTheLeaseEndedIfNobodyStoleIt() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), shortLease(), TTL)));
      advanceTime(shortLease());

      assertThat(store.heartbeat(id, claimed.token(), LONG))
          .as("heartbeat after the lease ended")
          .isTrue();
      assertThat(store.complete(id, claimed.token(), utf8("late but fine"), TTL))
          .as("complete")
          .isTrue();

      assertThat(present(id).result()).isEqualTo(utf8("late but fine"));
    }

    @Test
    void aCompletedRecordLivesItsCompletionTtlFromCompletion() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      Duration completionTtl = Duration.ofHours(7);

      assertThat(store.complete(id, claimed.token(), utf8("done"), completionTtl)).isTrue();

      IdempotencyRecord record = present(id);
      assertThat(record.expiresAt())
          .isBeforeOrEqualTo(record.observedAt().plus(completionTtl).plusSeconds(1))
          .isAfter(record.observedAt().plus(completionTtl).minusSeconds(10));
    }

    @Test
    void completeClearsTheRecoveryPoint() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      assertThat(store.checkpoint(id, claimed.token(), utf8("card charged, receipt pending"), LONG))
          .isTrue();

      assertThat(store.complete(id, claimed.token(), utf8("done"), TTL)).isTrue();

      assertThat(present(id).recoveryPoint())
          .as("a finished record keeps no recovery point")
          .isNull();
      assertThat(
              existing(store.claim(request(id, present(id).fingerprint(), LONG, TTL)))
                  .recoveryPoint())
          .isNull();
    }

    @Test
    void failFinalClearsTheRecoveryPoint() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      assertThat(store.checkpoint(id, claimed.token(), utf8("card charged, receipt pending"), LONG))
          .isTrue();

      assertThat(store.failFinal(id, claimed.token(), utf8("declined"), TTL)).isTrue();

      assertThat(present(id).recoveryPoint())
          .as("a finished record keeps no recovery point")
          .isNull();
    }
  }

  /** Releasing a lease: the record goes, and the key is claimable afresh. */
  @Nested
  class Release {

    @Test
    void releaseDeletesTheRecord() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(store.release(id, claimed.token())).isTrue();

      assertThat(store.get(id)).isEmpty();
      assertThat(store.release(id, claimed.token())).as("a second release").isFalse();
    }

    @Test
    void releaseMakesTheKeyClaimableWithAStrictlyLargerToken() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed first = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      assertThat(store.checkpoint(id, first.token(), utf8("step 1"), LONG)).isTrue();
      assertThat(store.release(id, first.token())).isTrue();

      Claimed second = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(second.token()).isGreaterThan(first.token());
      assertThat(second.stolen()).as("a claim after a release is fresh, not a steal").isFalse();
      assertThat(second.recoveryPoint()).isNull();
      assertThat(present(id).recoveryPoint()).isNull();
      assertThat(store.complete(id, first.token(), utf8("zombie"), TTL))
          .as("the released token")
          .isFalse();
    }
  }

  /** Heartbeats, one lease at a time and batched. */
  @Nested
  class Heartbeat {

    /** Extends many leases; {@link HeartbeatAsync} runs every test here through the async call. */
    Set<LeaseToken> heartbeatMany(List<LeaseToken> leases, Duration lease) {
      return store.heartbeat(leases, lease);
    }

    @Test
    void heartbeatExtendsTheLease() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));

      assertThat(store.heartbeat(id, claimed.token(), LONG)).isTrue();
      advanceTime(shortLease());

      IdempotencyRecord seen = existing(store.claim(request(id, fingerprint, LONG, TTL)));
      assertThat(seen.token()).isEqualTo(claimed.token());
      assertThat(seen.isStealable()).isFalse();
      assertThat(seen.leaseUntil()).isAfter(claimed.leaseUntil());
      assertThat(store.complete(id, claimed.token(), utf8("done"), TTL)).isTrue();
    }

    @Test
    void heartbeatKeepsTheRecordAliveUntilTheNewLeaseEnds() {
      RecordId id = newId();
      Claimed claimed =
          claimed(store.claim(request(id, newFingerprint(), shortLease(), shortLease())));

      assertThat(store.heartbeat(id, claimed.token(), LONG)).isTrue();
      advanceTime(shortLease());

      IdempotencyRecord record = present(id);
      assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(record.expiresAt()).isAfterOrEqualTo(record.leaseUntil());
      assertThat(store.complete(id, claimed.token(), utf8("done"), TTL)).isTrue();
    }

    @Test
    void aBatchedHeartbeatExtendsEveryHeldLeaseAndNamesOnlyThose() {
      Fingerprint fingerprint = newFingerprint();
      List<LeaseToken> held = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        RecordId id = newId();
        held.add(
            new LeaseToken(
                id, claimed(store.claim(request(id, fingerprint, shortLease(), TTL))).token()));
      }
      RecordId completed = newId();
      long completedToken =
          claimed(store.claim(request(completed, fingerprint, LONG, TTL))).token();
      assertThat(store.complete(completed, completedToken, utf8("done"), TTL)).isTrue();
      RecordId released = newId();
      long releasedToken = claimed(store.claim(request(released, fingerprint, LONG, TTL))).token();
      assertThat(store.release(released, releasedToken)).isTrue();
      Stolen stolen = stealOne();
      IdempotencyRecord completedBefore = present(completed);
      List<LeaseToken> batch = new ArrayList<>(held);
      batch.add(new LeaseToken(completed, completedToken));
      batch.add(new LeaseToken(released, releasedToken));
      batch.add(new LeaseToken(stolen.id, stolen.zombie));
      batch.add(new LeaseToken(newId(), 1)); // a record that does not exist

      Set<LeaseToken> extended = heartbeatMany(batch, LONG);

      assertThat(extended).containsExactlyInAnyOrderElementsOf(held);
      advanceTime(shortLease());
      for (LeaseToken lease : held) {
        IdempotencyRecord seen = existing(store.claim(request(lease.id(), fingerprint, LONG, TTL)));
        assertThat(seen.token()).as("token of %s", lease.id()).isEqualTo(lease.token());
        assertThat(seen.isStealable()).as("%s stealable", lease.id()).isFalse();
        assertThat(seen.expiresAt()).isAfterOrEqualTo(seen.leaseUntil());
      }
      assertUnchanged(completed, completedBefore);
      assertThat(store.get(released)).isEmpty();
      assertUnchanged(stolen.id, stolen.after);
      for (LeaseToken lease : held) {
        assertThat(store.complete(lease.id(), lease.token(), utf8("done"), TTL)).isTrue();
      }
    }

    @Test
    void aBatchedHeartbeatWithAWrongTokenChangesNothing() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      IdempotencyRecord before = present(id);

      Set<LeaseToken> extended =
          heartbeatMany(
              List.of(
                  new LeaseToken(id, claimed.token() + 1),
                  new LeaseToken(newId(), claimed.token())),
              LONG);

      assertThat(extended).isEmpty();
      assertUnchanged(id, before);
    }

    @Test
    void aBatchedHeartbeatOfAThousandLeasesExtendsThemAll() {
      Fingerprint fingerprint = newFingerprint();
      List<LeaseToken> held = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        RecordId id = newId();
        held.add(
            new LeaseToken(id, claimed(store.claim(request(id, fingerprint, LONG, TTL))).token()));
      }

      Set<LeaseToken> extended = heartbeatMany(held, LONG);

      assertThat(extended).hasSize(held.size()).containsAll(held);
      for (LeaseToken lease : held) {
        assertThat(store.release(lease.id(), lease.token())).isTrue();
      }
    }

    @Test
    void anEmptyBatchedHeartbeatExtendsNothing() {
      assertThat(heartbeatMany(List.of(), LONG)).isEmpty();
    }
  }

  /** The heartbeat tests again, through {@link IdempotencyStore#heartbeatAsync}. */
  @Nested
  class HeartbeatAsync extends Heartbeat {

    private final ExecutorService blocking = Executors.newFixedThreadPool(4);

    @AfterEach
    void stopTheBlockingPool() throws InterruptedException {
      blocking.shutdownNow();
      blocking.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Override
    Set<LeaseToken> heartbeatMany(List<LeaseToken> leases, Duration lease) {
      return awaitStage(store.heartbeatAsync(leases, lease, blocking));
    }
  }

  /** Stealing an ended lease, the recovery point it hands over, and fencing out the zombie. */
  @Nested
  class StealAndRecoveryPoint {

    /** Ends the lease, blocking or asynchronously. */
    private boolean endLease(boolean async, RecordId id, long token) {
      return async
          ? awaitStage(store.endLeaseAsync(id, token, Runnable::run))
          : store.endLease(id, token);
    }

    /**
     * A holder that gives its key back when it may not release it (it checkpointed) ends its lease
     * and keeps the record: the next claim steals it at once, with the recovery point, and the
     * holder is fenced out as after any steal.
     */
    @Test
    void anEndedLeaseKeepsTheRecordAndTheNextClaimStealsItAtOnce() {
      assumeTrue(endsLeases(), "the store does not end leases early");
      for (boolean async : new boolean[] {false, true}) {
        RecordId id = newId();
        Fingerprint fingerprint = newFingerprint();
        Claimed first = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
        assertThat(store.checkpoint(id, first.token(), utf8("charged"), LONG)).isTrue();
        IdempotencyRecord before = present(id);

        assertThat(endLease(async, id, first.token())).isTrue();

        IdempotencyRecord after = present(id);
        assertThat(after.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(after.token()).isEqualTo(first.token());
        assertThat(after.fingerprint()).isEqualTo(fingerprint);
        assertThat(after.recoveryPoint()).isEqualTo(utf8("charged"));
        assertThat(after.expiresAt()).isEqualTo(before.expiresAt());
        assertThat(after.leaseUntil()).isBefore(before.leaseUntil());
        advanceTime(Duration.ofMillis(1));
        Claimed thief = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
        assertThat(thief.stolen()).isTrue();
        assertThat(thief.recoveryPoint()).isEqualTo(utf8("charged"));
        assertThat(thief.token()).isGreaterThan(first.token());
        assertThat(store.complete(id, first.token(), utf8("zombie"), TTL)).isFalse();
        assertThat(endLease(async, id, first.token())).as("ended by its old holder").isFalse();
        assertThat(present(id).leaseUntil()).isEqualTo(thief.leaseUntil());
      }
    }

    /** Only the holder ends a lease, and only while it is held. */
    @Test
    void onlyTheHolderEndsALeaseAndOnlyWhileItIsHeld() {
      for (boolean async : new boolean[] {false, true}) {
        RecordId id = newId();
        Fingerprint fingerprint = newFingerprint();
        Claimed held = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
        IdempotencyRecord before = present(id);

        assertThat(endLease(async, id, held.token() + 1)).as("another token").isFalse();
        assertThat(present(id).leaseUntil()).isEqualTo(before.leaseUntil());
        assertThat(existing(store.claim(request(id, fingerprint, LONG, TTL))).token())
            .isEqualTo(held.token());
        assertThat(endLease(async, newId(), held.token())).as("an absent record").isFalse();
        assertThat(store.complete(id, held.token(), utf8("done"), TTL)).isTrue();
        assertThat(endLease(async, id, held.token())).as("a finished record").isFalse();
        assertThat(present(id).state()).isEqualTo(RecordState.COMPLETED);
      }
    }

    @Test
    void aClaimAfterTheLeaseEndedStealsItWithALargerToken() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed first = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      advanceTime(shortLease());

      Claimed thief = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(thief.stolen()).isTrue();
      assertThat(thief.token()).isGreaterThan(first.token());
      IdempotencyRecord record = present(id);
      assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(record.token()).isEqualTo(thief.token());
      assertThat(record.leaseUntil()).isEqualTo(thief.leaseUntil());
      assertThat(record.fingerprint()).isEqualTo(fingerprint);
    }

    @Test
    void aStealHandsOverTheLastRecoveryPoint() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed first = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      assertThat(store.checkpoint(id, first.token(), utf8("step 1 done"), shortLease())).isTrue();
      assertThat(store.checkpoint(id, first.token(), utf8("step 2 done"), shortLease())).isTrue();
      assertThat(present(id).recoveryPoint()).isEqualTo(utf8("step 2 done"));
      advanceTime(shortLease());

      Claimed thief = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(thief.stolen()).isTrue();
      assertThat(thief.recoveryPoint()).isEqualTo(utf8("step 2 done"));
    }

    @Test
    void aStealWithoutACheckpointHandsOverNoRecoveryPoint() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      advanceTime(shortLease());

      Claimed thief = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(thief.stolen()).isTrue();
      assertThat(thief.recoveryPoint()).isNull();
    }

    @Test
    void aRecoveryPointSurvivesASecondSteal() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed first = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      assertThat(store.checkpoint(id, first.token(), utf8("step 1 done"), shortLease())).isTrue();
      advanceTime(shortLease());
      Claimed second = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      advanceTime(shortLease());

      Claimed third = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(third.stolen()).isTrue();
      assertThat(third.token()).isGreaterThan(second.token());
      assertThat(third.recoveryPoint()).isEqualTo(utf8("step 1 done"));
    }

    @Test
    void aStealWithAnotherFingerprintIsRefused() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed first = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      advanceTime(shortLease());
      IdempotencyRecord before = present(id);

      IdempotencyRecord seen = existing(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(seen.token()).isEqualTo(first.token());
      assertThat(seen.fingerprint()).isEqualTo(fingerprint);
      assertThat(seen.isStealable())
          .as("the lease has ended, but not for this fingerprint")
          .isTrue();
      assertUnchanged(id, before);
      assertThat(store.complete(id, first.token(), utf8("the owner finishes"), TTL)).isTrue();
    }

    @Test
    void completeAfterLeaseStolenIsRejected() {
      Stolen stolen = stealOne();

      assertThat(store.complete(stolen.id, stolen.zombie, utf8("zombie result"), TTL)).isFalse();

      assertUnchanged(stolen.id, stolen.after);
      assertThat(store.complete(stolen.id, stolen.thief, utf8("thief result"), TTL)).isTrue();
      assertThat(present(stolen.id).result()).isEqualTo(utf8("thief result"));
    }

    @Test
    void failFinalAfterLeaseStolenIsRejected() {
      Stolen stolen = stealOne();

      assertThat(store.failFinal(stolen.id, stolen.zombie, utf8("zombie failure"), TTL)).isFalse();

      assertUnchanged(stolen.id, stolen.after);
    }

    @Test
    void zombieReleaseCannotDeleteTheNewOwnersRecord() {
      Stolen stolen = stealOne();

      assertThat(store.release(stolen.id, stolen.zombie)).isFalse();

      assertUnchanged(stolen.id, stolen.after);
    }

    @Test
    void zombieHeartbeatCannotExtendTheNewOwnersLease() {
      Stolen stolen = stealOne();

      assertThat(store.heartbeat(stolen.id, stolen.zombie, LONG.multipliedBy(3))).isFalse();

      assertUnchanged(stolen.id, stolen.after);
    }

    @Test
    void zombieCheckpointCannotOverwriteTheNewOwnersRecoveryPoint() {
      Stolen stolen = stealOne();
      assertThat(store.checkpoint(stolen.id, stolen.thief, utf8("thief step"), LONG)).isTrue();
      IdempotencyRecord before = present(stolen.id);

      assertThat(store.checkpoint(stolen.id, stolen.zombie, utf8("zombie step"), LONG)).isFalse();

      assertUnchanged(stolen.id, before);
      assertThat(present(stolen.id).recoveryPoint()).isEqualTo(utf8("thief step"));
    }
  }

  /** Fencing tokens across every way a key changes hands. */
  @Nested
  class Tokens {

    @Test
    void tokensStrictlyIncreaseAcrossClaimStealReleaseAndExpiry() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      List<Long> tokens = new ArrayList<>();

      Claimed claimed = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      tokens.add(claimed.token());
      advanceTime(shortLease());
      Claimed stolen = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      assertThat(stolen.stolen()).isTrue();
      tokens.add(stolen.token());
      assertThat(store.release(id, stolen.token())).isTrue();
      Claimed afterRelease = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      tokens.add(afterRelease.token());
      assertThat(store.complete(id, afterRelease.token(), utf8("done"), shortLease())).isTrue();
      advanceTime(shortLease());
      Claimed afterExpiry = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      tokens.add(afterExpiry.token());

      assertThat(tokens).isSorted().doesNotHaveDuplicates();
    }
  }

  /** Records and leases that outlive their TTL. */
  @Nested
  class Expiry {

    @Test
    void aCompletedRecordExpiresAfterItsTtl() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      assertThat(store.complete(id, claimed.token(), utf8("done"), shortLease())).isTrue();
      assertThat(store.get(id)).isPresent();

      advanceTime(shortLease());

      assertThat(store.get(id)).isEmpty();
      Claimed fresh = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      assertThat(fresh.stolen()).isFalse();
      assertThat(fresh.token()).isGreaterThan(claimed.token());
      assertThat(present(id).state()).isEqualTo(RecordState.IN_PROGRESS);
    }

    @Test
    void aFailedFinalRecordExpiresAfterItsTtl() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      assertThat(store.failFinal(id, claimed.token(), utf8("declined"), shortLease())).isTrue();

      advanceTime(shortLease());

      assertThat(store.get(id)).isEmpty();
      assertThat(claimed(store.claim(request(id, newFingerprint(), LONG, TTL))).token())
          .isGreaterThan(claimed.token());
    }

    @Test
    void anExpiredInProgressRecordIsClaimedAfreshNotStolen() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, shortLease(), shortLease())));
      assertThat(store.checkpoint(id, claimed.token(), utf8("step 1"), shortLease())).isTrue();

      advanceTime(shortLease());

      assertThat(store.get(id)).isEmpty();
      Claimed fresh = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
      assertThat(fresh.stolen()).as("an expired record is absent, so this is no steal").isFalse();
      assertThat(fresh.recoveryPoint()).isNull();
      assertThat(fresh.token()).isGreaterThan(claimed.token());
    }

    @Test
    void writesToAnExpiredRecordAreRejected() {
      RecordId id = newId();
      Claimed claimed =
          claimed(store.claim(request(id, newFingerprint(), shortLease(), shortLease())));

      advanceTime(shortLease());

      assertThat(store.heartbeat(id, claimed.token(), LONG)).as("heartbeat").isFalse();
      assertThat(store.checkpoint(id, claimed.token(), utf8("x"), LONG)).as("checkpoint").isFalse();
      assertThat(store.complete(id, claimed.token(), utf8("x"), TTL)).as("complete").isFalse();
      assertThat(store.failFinal(id, claimed.token(), utf8("x"), TTL)).as("failFinal").isFalse();
      assertThat(store.release(id, claimed.token())).as("release").isFalse();
      assertThat(store.get(id)).isEmpty();
    }
  }

  /** purgeExpired. */
  @Nested
  class Purge {

    @Test
    void purgeExpiredDeletesExpiredRecordsAndKeepsLiveOnes() {
      List<RecordId> expiring = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        RecordId id = newId();
        Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
        assertThat(store.complete(id, claimed.token(), utf8("done " + i), shortLease())).isTrue();
        expiring.add(id);
      }
      RecordId inProgress = newId();
      claimed(store.claim(request(inProgress, newFingerprint(), LONG, TTL)));
      RecordId completed = newId();
      Claimed claimed = claimed(store.claim(request(completed, newFingerprint(), LONG, TTL)));
      assertThat(store.complete(completed, claimed.token(), utf8("kept"), TTL)).isTrue();
      RecordId endedLease = newId();
      claimed(store.claim(request(endedLease, newFingerprint(), shortLease(), TTL)));
      IdempotencyRecord inProgressBefore = present(inProgress);
      IdempotencyRecord completedBefore = present(completed);
      advanceTime(shortLease());

      int purged = purgeAll(100);

      // A shared store may hold other tests' expired records too, so this is a lower bound.
      assertThat(purged).isGreaterThanOrEqualTo(expiring.size());
      for (RecordId id : expiring) {
        assertThat(store.get(id)).isEmpty();
      }
      assertUnchanged(inProgress, inProgressBefore);
      assertUnchanged(completed, completedBefore);
      assertThat(present(endedLease).isStealable())
          .as("an ended lease is not an expired record")
          .isTrue();
    }

    @Test
    void purgeExpiredDeletesNoMoreThanTheBatchSize() {
      for (int i = 0; i < 5; i++) {
        RecordId id = newId();
        Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
        assertThat(store.complete(id, claimed.token(), utf8("done"), shortLease())).isTrue();
      }
      advanceTime(shortLease());

      assertThat(store.purgeExpired(2)).isEqualTo(2);
      assertThat(store.purgeExpired(1)).isEqualTo(1);
      assertThat(purgeAll(2)).isGreaterThanOrEqualTo(2);
      assertThat(store.purgeExpired(1000)).isLessThan(1000);
    }

    @Test
    void purgeExpiredRejectsABatchSizeBelowOne() {
      assertThatThrownBy(() -> store.purgeExpired(0)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> store.purgeExpired(-1)).isInstanceOf(IllegalArgumentException.class);
    }
  }

  /** Results and recovery points: large, binary, empty. */
  @Nested
  class Values {

    @Test
    void aLargeResultRoundTripsExactly() {
      long seed = ThreadLocalRandom.current().nextLong();
      byte[] large = Samples.randomBytes(largeValueBytes(), seed);
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(store.complete(id, claimed.token(), large, TTL)).isTrue();

      assertSameBytes(
          present(id).result(), Samples.randomBytes(largeValueBytes(), seed), "result read by get");
      assertSameBytes(
          existing(store.claim(request(id, fingerprint, LONG, TTL))).result(),
          Samples.randomBytes(largeValueBytes(), seed),
          "result returned by a claim");
    }

    @Test
    void aLargeRecoveryPointIsHandedOverExactly() {
      long seed = ThreadLocalRandom.current().nextLong();
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      assertThat(
              store.checkpoint(
                  id, claimed.token(), Samples.randomBytes(largeValueBytes(), seed), shortLease()))
          .isTrue();
      advanceTime(shortLease());

      Claimed thief = claimed(store.claim(request(id, fingerprint, LONG, TTL)));

      assertSameBytes(
          thief.recoveryPoint(), Samples.randomBytes(largeValueBytes(), seed), "recovery point");
    }

    @Test
    void aResultWithEveryByteValueRoundTrips() {
      RecordId completed = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed claimed = claimed(store.claim(request(completed, fingerprint, LONG, TTL)));
      assertThat(store.complete(completed, claimed.token(), Samples.everyByteValue(), TTL))
          .isTrue();
      RecordId failed = newId();
      Claimed other = claimed(store.claim(request(failed, fingerprint, LONG, TTL)));
      assertThat(store.failFinal(failed, other.token(), Samples.everyByteValue(), TTL)).isTrue();

      assertSameBytes(present(completed).result(), Samples.everyByteValue(), "completed result");
      assertSameBytes(
          existing(store.claim(request(completed, fingerprint, LONG, TTL))).result(),
          Samples.everyByteValue(),
          "completed result returned by a claim");
      assertSameBytes(present(failed).result(), Samples.everyByteValue(), "failed result");
    }

    @Test
    void aRecoveryPointWithEveryByteValueRoundTrips() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(store.checkpoint(id, claimed.token(), Samples.everyByteValue(), LONG)).isTrue();

      assertSameBytes(present(id).recoveryPoint(), Samples.everyByteValue(), "recovery point");
    }

    @Test
    void anEmptyResultStaysEmpty() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(store.complete(id, claimed.token(), new byte[0], TTL)).isTrue();

      assertThat(present(id).result()).isNotNull().isEmpty();
    }
  }

  /** Scopes and keys: unicode, maximum lengths, and what makes two of them different. */
  @Nested
  class ScopesAndKeys {

    @Test
    void aUnicodeScopeIsStoredAndReadBack() {
      Scope scope = Scope.of("tenant-ü-日本-😀", Samples.unique(), "POST /payments");
      RecordId id = RecordId.of(scope, IdempotencyKey.of("key-" + Samples.unique()));

      assertThat(store.claim(request(id, newFingerprint(), LONG, TTL))).isInstanceOf(Claimed.class);

      assertThat(present(id).id()).isEqualTo(id);
      assertThat(present(id).id().scope().value()).isEqualTo(scope.value());
    }

    @Test
    void aScopeOfMaximumLengthInFourByteCharactersIsStored() {
      String unique = Samples.unique();
      String emoji = "😀".repeat((Scope.MAX_LENGTH - unique.length()) / 2);
      Scope scope = new Scope(unique + emoji);
      assertThat(scope.value()).hasSize(Scope.MAX_LENGTH);
      RecordId id = RecordId.of(scope, IdempotencyKey.of("k"));

      claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(present(id).id()).isEqualTo(id);
      assertThat(store.get(RecordId.of(new Scope(unique + emoji.substring(2)), id.key())))
          .isEmpty();
    }

    @Test
    void aKeyWithEveryPrintableAsciiCharacterIsStored() {
      StringBuilder everyChar = new StringBuilder();
      for (char c = 0x21; c <= 0x7E; c++) {
        everyChar.append(c);
      }
      RecordId id = RecordId.of(newScope(), IdempotencyKey.of(everyChar.toString()));

      claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(present(id).id().key().value()).isEqualTo(everyChar.toString());
    }

    @Test
    void aKeyOfMaximumLengthIsStored() {
      Scope scope = newScope();
      String longest = "k".repeat(IdempotencyKey.MAX_LENGTH - 1);
      RecordId id = RecordId.of(scope, IdempotencyKey.of(longest + "x"));

      claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(present(id).id()).isEqualTo(id);
      assertThat(store.get(RecordId.of(scope, IdempotencyKey.of(longest + "y")))).isEmpty();
    }

    @Test
    void keysThatDifferOnlyInCaseOrWildcardsAreDifferentRecords() {
      Scope scope = newScope();
      List<String> keys =
          List.of("order-abc", "ORDER-ABC", "order-ab_", "order-ab%", "order-ab*", "order-ab\\");

      for (String key : keys) {
        claimed(
            store.claim(
                request(RecordId.of(scope, IdempotencyKey.of(key)), newFingerprint(), LONG, TTL)));
      }

      for (String key : keys) {
        assertThat(present(RecordId.of(scope, IdempotencyKey.of(key))).id().key().value())
            .isEqualTo(key);
      }
    }

    @Test
    void scopesThatDifferOnlyInCaseSpacingOrNormalisationAreDifferentRecords() {
      String unique = Samples.unique();
      List<String> tenants =
          List.of(
              "tenant-é",
              "tenant-É",
              Normalizer.normalize("tenant-é", Normalizer.Form.NFD),
              "tenant-é ",
              "tenant-e");
      IdempotencyKey key = IdempotencyKey.of("k-" + unique);

      for (String tenant : tenants) {
        claimed(
            store.claim(
                request(RecordId.of(Scope.of(unique, tenant), key), newFingerprint(), LONG, TTL)));
      }

      for (String tenant : tenants) {
        assertThat(present(RecordId.of(Scope.of(unique, tenant), key)).id().scope().value())
            .isEqualTo(Scope.of(unique, tenant).value());
      }
    }

    @Test
    void theSameKeyInTwoScopesIsTwoIndependentRecords() {
      IdempotencyKey key = IdempotencyKey.of("shared-" + Samples.unique());
      RecordId a = RecordId.of(newScope(), key);
      RecordId b = RecordId.of(newScope(), key);
      Claimed inA = claimed(store.claim(request(a, newFingerprint(), LONG, TTL)));
      Claimed inB = claimed(store.claim(request(b, newFingerprint(), LONG, TTL)));

      assertThat(inB.stolen()).isFalse();
      assertThat(store.complete(a, inA.token(), utf8("a's result"), TTL)).isTrue();
      assertThat(present(b).state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(store.release(b, inB.token())).isTrue();
      assertThat(present(a).result()).isEqualTo(utf8("a's result"));
      assertThat(store.get(b)).isEmpty();
    }
  }

  /** observedAt and leaseRemaining, on the store's clock. */
  @Nested
  class TimeAsTheStoreSeesIt {

    @Test
    void observedAtAndLeaseRemainingAreSane() {
      RecordId id = newId();
      Duration lease = Duration.ofMinutes(5);
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), lease, TTL)));

      IdempotencyRecord record = present(id);

      Instant claimedAt = claimed.leaseUntil().minus(lease);
      assertThat(record.observedAt())
          .isAfterOrEqualTo(claimedAt)
          .isBefore(claimedAt.plusSeconds(30));
      assertThat(record.leaseRemaining()).isPositive().isLessThanOrEqualTo(lease);
      assertThat(record.isStealable()).isFalse();
      assertThat(record.expiresAt())
          .isAfterOrEqualTo(record.leaseUntil())
          .isAfter(claimedAt.plus(TTL).minusSeconds(30))
          .isBeforeOrEqualTo(claimedAt.plus(TTL).plusSeconds(1));
    }

    @Test
    void anEndedLeaseShowsAsStealableWithNothingRemaining() {
      RecordId id = newId();
      claimed(store.claim(request(id, newFingerprint(), shortLease(), TTL)));

      advanceTime(shortLease());

      IdempotencyRecord record = present(id);
      assertThat(record.isStealable()).isTrue();
      assertThat(record.leaseRemaining()).isZero();
    }

    @Test
    void observedAtFollowsTheStoresClock() {
      RecordId id = newId();
      claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      Instant before = present(id).observedAt();

      advanceTime(shortLease());

      assertThat(present(id).observedAt()).isAfterOrEqualTo(before.plus(shortLease()));
    }
  }

  /**
   * The operator's listing of long-running work: in progress, live, running at least the bound
   * since the first claim, oldest first, bounded.
   */
  @Nested
  class InFlight {

    private IdempotencyStore isolated;

    @BeforeEach
    void openIsolatedStore() {
      isolated = createIsolatedStore();
      assertThat(isolated.inFlight(Duration.ZERO, 1).records())
          .as(
              "records in progress in the store of createIsolatedStore() before the test: a store"
                  + " whose tests share records overrides it with one over a new table, key"
                  + " prefix or instance")
          .isEmpty();
    }

    @AfterEach
    void closeIsolatedStore() {
      if (isolated != null && isolated != store) {
        isolated.close();
      }
    }

    @Test
    void listsOnlyLiveInProgressRecordsRunningAtLeastTheBoundOldestFirst() {
      RecordId expiring = newId();
      claimed(isolated.claim(request(expiring, newFingerprint(), shortLease(), shortLease())));
      RecordId oldest = newId();
      claimed(isolated.claim(request(oldest, newFingerprint(), LONG, TTL)));
      RecordId completed = newId();
      Claimed c = claimed(isolated.claim(request(completed, newFingerprint(), LONG, TTL)));
      assertThat(isolated.complete(completed, c.token(), utf8("done"), TTL)).isTrue();
      RecordId failed = newId();
      Claimed f = claimed(isolated.claim(request(failed, newFingerprint(), LONG, TTL)));
      assertThat(isolated.failFinal(failed, f.token(), utf8("no"), TTL)).isTrue();
      RecordId released = newId();
      Claimed r = claimed(isolated.claim(request(released, newFingerprint(), LONG, TTL)));
      assertThat(isolated.release(released, r.token())).isTrue();
      advanceTime(shortLease());
      RecordId older = newId();
      claimed(isolated.claim(request(older, newFingerprint(), LONG, TTL)));
      advanceTime(shortLease());
      RecordId young = newId();
      claimed(isolated.claim(request(young, newFingerprint(), LONG, TTL)));

      dev.once.store.InFlight found = isolated.inFlight(shortLease(), 10);

      assertThat(found.records()).extracting(IdempotencyRecord::id).containsExactly(oldest, older);
      assertThat(found.complete()).isTrue();
      for (IdempotencyRecord listed : found.records()) {
        assertThat(listed.state()).isEqualTo(RecordState.IN_PROGRESS);
        assertThat(listed.createdAt()).isNotNull();
        assertThat(listed.age())
            .hasValueSatisfying(age -> assertThat(age).isGreaterThanOrEqualTo(shortLease()));
      }
      assertThat(found.records().get(0).createdAt()).isBefore(found.records().get(1).createdAt());
    }

    @Test
    void aZeroBoundListsEveryLiveInProgressRecordAndTheLimitKeepsTheOldest() {
      List<RecordId> ids = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        RecordId id = newId();
        claimed(isolated.claim(request(id, newFingerprint(), LONG, TTL)));
        ids.add(id);
        advanceTime(Duration.ofMillis(50));
      }

      assertThat(isolated.inFlight(Duration.ZERO, 10).records())
          .extracting(IdempotencyRecord::id)
          .containsExactlyElementsOf(ids);
      dev.once.store.InFlight two = isolated.inFlight(Duration.ZERO, 2);
      assertThat(two.records())
          .extracting(IdempotencyRecord::id)
          .containsExactly(ids.get(0), ids.get(1));
      assertThat(two.complete()).isTrue();
    }

    @Test
    void aStealKeepsTheCreationTimeSoTheWorkCountsAsRunningSinceTheFirstClaim() {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      claimed(isolated.claim(request(id, fingerprint, shortLease(), TTL)));
      Instant created = isolated.get(id).orElseThrow().createdAt();
      assertThat(created).as("createdAt of a fresh claim").isNotNull();
      advanceTime(shortLease());

      Claimed stolen = claimed(isolated.claim(request(id, fingerprint, LONG, TTL)));

      assertThat(stolen.stolen()).isTrue();
      assertThat(isolated.get(id).orElseThrow().createdAt()).isEqualTo(created);
      assertThat(isolated.inFlight(shortLease(), 10).records())
          .extracting(IdempotencyRecord::id)
          .containsExactly(id);
    }

    @Test
    void aFreshClaimAfterAReleaseStartsTheCountAgain() {
      RecordId id = newId();
      Claimed first = claimed(isolated.claim(request(id, newFingerprint(), LONG, TTL)));
      advanceTime(shortLease());
      assertThat(isolated.release(id, first.token())).isTrue();

      claimed(isolated.claim(request(id, newFingerprint(), LONG, TTL)));

      assertThat(isolated.inFlight(shortLease(), 10).records()).isEmpty();
      assertThat(isolated.inFlight(Duration.ZERO, 10).records())
          .extracting(IdempotencyRecord::id)
          .containsExactly(id);
    }

    @Test
    void listedRecordsTellWhetherTheyHaveARecoveryPointButNotWhatItHolds() {
      RecordId withPoint = newId();
      Claimed claimed = claimed(isolated.claim(request(withPoint, newFingerprint(), LONG, TTL)));
      assertThat(isolated.checkpoint(withPoint, claimed.token(), utf8("step 2 of 3"), LONG))
          .isTrue();
      advanceTime(Duration.ofMillis(50));
      RecordId withoutPoint = newId();
      claimed(isolated.claim(request(withoutPoint, newFingerprint(), LONG, TTL)));

      List<IdempotencyRecord> listed = isolated.inFlight(Duration.ZERO, 10).records();

      assertThat(listed).extracting(IdempotencyRecord::id).containsExactly(withPoint, withoutPoint);
      assertThat(listed.get(0).recoveryPoint()).isNotNull().isEmpty();
      assertThat(listed.get(0).result()).isNull();
      assertThat(listed.get(1).recoveryPoint()).isNull();
    }

    @Test
    @SuppressWarnings("NullAway") // the test passes null on purpose
    void aLimitOutsideOneToAThousandOrANegativeBoundIsRefused() {
      for (int bad : new int[] {0, -1, dev.once.store.InFlight.MAX_LIMIT + 1}) {
        assertThatThrownBy(() -> store.inFlight(Duration.ZERO, bad))
            .as("limit %d", bad)
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("limit");
      }
      for (Duration bad :
          new Duration[] {
            Duration.ofSeconds(-1), dev.once.store.InFlight.MAX_OLDER_THAN.plusSeconds(1)
          }) {
        assertThatThrownBy(() -> store.inFlight(bad, 10))
            .as("olderThan %s", bad)
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("olderThan");
      }
      assertThatThrownBy(() -> store.inFlight(null, 10)).isInstanceOf(NullPointerException.class);
      assertThat(store.inFlight(Duration.ZERO, dev.once.store.InFlight.MAX_LIMIT)).isNotNull();
      assertThat(store.inFlight(dev.once.store.InFlight.MAX_OLDER_THAN, 1)).isNotNull();
    }
  }

  /** Concurrent callers on one key. */
  @Nested
  class Races {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void sixtyFourThreadsRacingForOneKeyProduceExactlyOneLease() throws Exception {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();

      List<ClaimResult> results =
          race(RACERS, i -> store.claim(request(id, fingerprint, LONG, TTL)));

      List<Claimed> winners = claimedOnly(results);
      assertThat(winners).as("leases granted").hasSize(1);
      long token = winners.get(0).token();
      assertThat(results)
          .filteredOn(Existing.class::isInstance)
          .hasSize(RACERS - 1)
          .allSatisfy(r -> assertThat(((Existing) r).record().token()).isEqualTo(token));
      assertThat(present(id).token()).isEqualTo(token);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void sixtyFourThreadsRacingToStealOneEndedLeaseProduceExactlyOneSteal() throws Exception {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      Claimed first = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
      assertThat(store.checkpoint(id, first.token(), utf8("halfway"), shortLease())).isTrue();
      advanceTime(shortLease());

      List<ClaimResult> results =
          race(RACERS, i -> store.claim(request(id, fingerprint, LONG, TTL)));

      List<Claimed> thieves = claimedOnly(results);
      assertThat(thieves).as("steals granted").hasSize(1);
      Claimed thief = thieves.get(0);
      assertThat(thief.stolen()).isTrue();
      assertThat(thief.recoveryPoint()).isEqualTo(utf8("halfway"));
      assertThat(results)
          .filteredOn(Existing.class::isInstance)
          .hasSize(RACERS - 1)
          .allSatisfy(r -> assertThat(((Existing) r).record().token()).isEqualTo(thief.token()));
      assertThat(store.complete(id, first.token(), utf8("zombie"), TTL)).isFalse();
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void racingCompletionsWithTheSameTokenHaveExactlyOneWinner() throws Exception {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      List<Boolean> results =
          race(
              RACERS,
              i ->
                  i % 2 == 0
                      ? store.complete(id, claimed.token(), utf8("result " + i), TTL)
                      : store.failFinal(id, claimed.token(), utf8("result " + i), TTL));

      assertThat(results).filteredOn(Boolean::booleanValue).hasSize(1);
      int winner = results.indexOf(true);
      IdempotencyRecord record = present(id);
      assertThat(record.result()).isEqualTo(utf8("result " + winner));
      assertThat(record.state())
          .isEqualTo(winner % 2 == 0 ? RecordState.COMPLETED : RecordState.FAILED_FINAL);
    }

    /**
     * Eight threads run random operations on four keys, then the whole history is checked against
     * the invariants in {@link HistoryChecker}. Set {@code -Donce.tck.seed=N} to replay a failing
     * seed's operations; the interleaving is up to the scheduler.
     */
    @Test
    void racingClaimsAndReleasesOnOneKeyGrantStrictlyIncreasingTokens() throws Exception {
      RecordId id = newId();
      Fingerprint fingerprint = newFingerprint();
      int racers = 8;
      int rounds = 40;
      // Each grant as [claim began, claim returned, token], by System.nanoTime.
      List<List<long[]>> grants =
          race(
              racers,
              racer -> {
                List<long[]> mine = new ArrayList<>();
                for (int round = 0; round < rounds; round++) {
                  long began = System.nanoTime();
                  ClaimResult result = store.claim(request(id, fingerprint, LONG, TTL));
                  long returned = System.nanoTime();
                  if (result instanceof Claimed c) {
                    mine.add(new long[] {began, returned, c.token()});
                    assertThat(store.release(id, c.token()))
                        .as("release of token %d", c.token())
                        .isTrue();
                  }
                }
                return mine;
              });

      List<long[]> all = grants.stream().flatMap(List::stream).toList();
      assertThat(all).as("grants").isNotEmpty();
      assertThat(all.stream().map(g -> g[2]).distinct().count())
          .as("distinct tokens")
          .isEqualTo(all.size());
      for (long[] earlier : all) {
        for (long[] later : all) {
          if (earlier[1] < later[0] && earlier[2] >= later[2]) {
            fail(
                "token "
                    + later[2]
                    + " was granted after token "
                    + earlier[2]
                    + " had been granted");
          }
        }
      }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aRandomisedConcurrentHistoryKeepsEveryFencingInvariant() throws Exception {
      long seed = Long.getLong("once.tck.seed", ThreadLocalRandom.current().nextLong());
      Consumer<Duration> clock = IdempotencyStoreContract.this::advanceTime;
      RandomHistory history =
          new RandomHistory(store, clock, shortLease(), 8, 200, 4, seed, Duration.ofSeconds(90));

      List<HistoryEvent> events = history.run();

      HistoryChecker checker = new HistoryChecker(shortLease());
      List<String> violations = checker.check(events);
      if (!violations.isEmpty()) {
        fail(
            "the history of "
                + events.size()
                + " operations with seed "
                + seed
                + " (rerun with -Donce.tck.seed="
                + seed
                + ") broke "
                + checker.violationCount()
                + " invariant(s):\n  "
                + String.join("\n  ", violations));
      }
      assertThat(events).filteredOn(HistoryEvent::isGrant).as("leases granted").isNotEmpty();
    }
  }

  /**
   * claimAll and finishAll: each answer as the single call would give it, in request order; all or
   * nothing when a claim batch fails; concurrent batches that never deadlock. {@link BatchesAsync}
   * runs every test again through the asynchronous calls.
   */
  @Nested
  class Batches {

    /** The batch claim under test; {@link BatchesAsync} goes through {@code claimAllAsync}. */
    List<ClaimResult> claimAll(IdempotencyStore on, List<ClaimRequest> requests) {
      return on.claimAll(requests);
    }

    /** The batch finish under test; {@link BatchesAsync} goes through {@code finishAllAsync}. */
    List<Boolean> finishAll(IdempotencyStore on, List<Finish> finishes) {
      return on.finishAll(finishes);
    }

    @Test
    void aClaimBatchAnswersInRequestOrderWhatSingleClaimsWould() {
      Fingerprint fingerprint = newFingerprint();
      RecordId ended = newId();
      Claimed endedLease = claimed(store.claim(request(ended, fingerprint, shortLease(), TTL)));
      assertThat(store.checkpoint(ended, endedLease.token(), utf8("halfway"), shortLease()))
          .isTrue();
      advanceTime(shortLease());
      RecordId fresh = newId();
      RecordId live = newId();
      Claimed liveLease = claimed(store.claim(request(live, fingerprint, LONG, TTL)));
      RecordId otherFingerprint = newId();
      claimed(store.claim(request(otherFingerprint, fingerprint, LONG, TTL)));
      RecordId completed = newId();
      long completedToken =
          claimed(store.claim(request(completed, fingerprint, LONG, TTL))).token();
      assertThat(store.complete(completed, completedToken, utf8("the result"), TTL)).isTrue();
      RecordId released = newId();
      long releasedToken = claimed(store.claim(request(released, fingerprint, LONG, TTL))).token();
      assertThat(store.release(released, releasedToken)).isTrue();
      IdempotencyRecord liveBefore = present(live);
      IdempotencyRecord otherBefore = present(otherFingerprint);
      IdempotencyRecord completedBefore = present(completed);

      List<ClaimResult> results =
          claimAll(
              store,
              List.of(
                  request(ended, fingerprint, LONG, TTL),
                  request(completed, fingerprint, LONG, TTL),
                  request(fresh, fingerprint, LONG, TTL),
                  request(otherFingerprint, newFingerprint(), LONG, TTL),
                  request(released, fingerprint, LONG, TTL),
                  request(live, fingerprint, LONG, TTL)));

      assertThat(results).hasSize(6);
      Claimed stolen = claimed(results.get(0));
      assertThat(stolen.stolen()).as("stolen").isTrue();
      assertThat(stolen.token()).isGreaterThan(endedLease.token());
      assertThat(stolen.recoveryPoint()).isEqualTo(utf8("halfway"));
      assertThat(present(ended).token()).isEqualTo(stolen.token());
      IdempotencyRecord replay = existing(results.get(1));
      assertThat(replay.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(replay.result()).isEqualTo(utf8("the result"));
      assertUnchanged(completed, completedBefore);
      Claimed first = claimed(results.get(2));
      assertThat(first.stolen()).isFalse();
      assertThat(first.recoveryPoint()).isNull();
      assertThat(present(fresh).token()).isEqualTo(first.token());
      assertThat(existing(results.get(3)).fingerprint()).isEqualTo(fingerprint);
      assertUnchanged(otherFingerprint, otherBefore);
      Claimed again = claimed(results.get(4));
      assertThat(again.stolen()).isFalse();
      assertThat(again.token()).isGreaterThan(releasedToken);
      assertThat(existing(results.get(5)).token()).isEqualTo(liveLease.token());
      assertUnchanged(live, liveBefore);
      assertThat(store.complete(ended, endedLease.token(), utf8("zombie"), TTL)).isFalse();
    }

    @Test
    void aFinishBatchAppliesEachWriteWithTheRightTokenAndNoneWithAWrongOne() {
      Fingerprint fingerprint = newFingerprint();
      RecordId[] ids = new RecordId[4];
      long[] tokens = new long[4];
      for (int i = 0; i < ids.length; i++) {
        ids[i] = newId();
        tokens[i] = claimed(store.claim(request(ids[i], fingerprint, LONG, TTL))).token();
      }
      RecordId wrong = ids[3];
      IdempotencyRecord wrongBefore = present(wrong);
      Stolen stolen = stealOne();
      RecordId absent = newId();

      List<Boolean> applied =
          finishAll(
              store,
              List.of(
                  Finish.release(ids[2], tokens[2]),
                  Finish.failFinal(stolen.id, stolen.zombie, utf8("zombie"), TTL),
                  Finish.complete(ids[0], tokens[0], utf8("done"), TTL),
                  Finish.release(wrong, tokens[3] + 1),
                  Finish.failFinal(ids[1], tokens[1], utf8("declined"), TTL),
                  Finish.complete(absent, tokens[0], utf8("nothing"), TTL)));

      assertThat(applied).containsExactly(true, false, true, false, true, false);
      assertThat(store.get(ids[2])).isEmpty();
      assertUnchanged(stolen.id, stolen.after);
      IdempotencyRecord done = present(ids[0]);
      assertThat(done.state()).isEqualTo(RecordState.COMPLETED);
      assertThat(done.result()).isEqualTo(utf8("done"));
      IdempotencyRecord declined = present(ids[1]);
      assertThat(declined.state()).isEqualTo(RecordState.FAILED_FINAL);
      assertThat(declined.result()).isEqualTo(utf8("declined"));
      assertUnchanged(wrong, wrongBefore);
      assertThat(store.get(absent)).isEmpty();
      // A second batch with the same writes finds every lease finished: nothing applies twice.
      assertThat(
              finishAll(
                  store,
                  List.of(
                      Finish.complete(ids[0], tokens[0], utf8("again"), TTL),
                      Finish.release(ids[2], tokens[2]),
                      Finish.complete(wrong, tokens[3] + 1, utf8("again"), TTL))))
          .containsExactly(false, false, false);
      assertThat(present(ids[0]).result()).isEqualTo(utf8("done"));
      assertThat(store.complete(wrong, tokens[3], utf8("the owner's"), TTL)).isTrue();
    }

    /**
     * A batch names each record once (DESIGN §2, "concurrency never changes the answer"): one
     * multi-row statement would answer every copy of a repeated record alike, so two copies of a
     * new key's claim would both be granted, under one token, and the work would run twice. A
     * repeated record is refused before the store changes anything, in every batch call.
     */
    @Test
    void aBatchThatNamesARecordTwiceIsRefusedAndChangesNothing() {
      Fingerprint fingerprint = newFingerprint();
      RecordId fresh = newId();
      RecordId other = newId();
      assertThatThrownBy(
              () ->
                  claimAll(
                      store,
                      List.of(
                          request(other, fingerprint, LONG, TTL),
                          request(fresh, fingerprint, LONG, TTL),
                          request(fresh, fingerprint, LONG, TTL))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(fresh.toString());
      assertThat(store.get(fresh)).as("the repeated record").isEmpty();
      assertThat(store.get(other)).as("the other record of the refused batch").isEmpty();

      long token = claimed(store.claim(request(fresh, fingerprint, LONG, TTL))).token();
      IdempotencyRecord before = present(fresh);
      assertThatThrownBy(
              () ->
                  finishAll(
                      store,
                      List.of(
                          Finish.complete(fresh, token, utf8("first"), TTL),
                          Finish.release(fresh, token))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(fresh.toString());
      assertUnchanged(fresh, before);
      assertThatThrownBy(
              () ->
                  store.heartbeat(
                      List.of(new LeaseToken(fresh, token), new LeaseToken(fresh, token + 1)),
                      LONG))
          .isInstanceOf(IllegalArgumentException.class);
      assertUnchanged(fresh, before);
      assertThat(store.complete(fresh, token, utf8("done"), TTL)).isTrue();
    }

    @Test
    void emptyBatchesAnswerEmpty() {
      assertThat(claimAll(store, List.of())).isEmpty();
      assertThat(finishAll(store, List.of())).isEmpty();
    }

    @Test
    void aBatchOfThreeHundredRecordsIsClaimedAndFinishedWhole() {
      Fingerprint fingerprint = newFingerprint();
      List<ClaimRequest> requests = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        requests.add(request(newId(), fingerprint, LONG, TTL));
      }

      List<ClaimResult> results = claimAll(store, requests);

      assertThat(results).hasSize(requests.size()).allMatch(Claimed.class::isInstance);
      List<Finish> finishes = new ArrayList<>();
      for (int i = 0; i < requests.size(); i++) {
        RecordId id = requests.get(i).id();
        long token = ((Claimed) results.get(i)).token();
        assertThat(present(id).token()).as("token of %s", id).isEqualTo(token);
        finishes.add(
            i % 2 == 0
                ? Finish.complete(id, token, utf8("result " + i), TTL)
                : Finish.release(id, token));
      }
      assertThat(finishAll(store, finishes)).hasSize(finishes.size()).allMatch(b -> b);
      List<ClaimResult> again = claimAll(store, requests);
      for (int i = 0; i < requests.size(); i++) {
        if (i % 2 == 0) {
          assertThat(existing(again.get(i)).result()).isEqualTo(utf8("result " + i));
        } else {
          assertThat(claimed(again.get(i)).token())
              .isGreaterThan(((Claimed) results.get(i)).token());
        }
      }
    }

    /**
     * Two batches over the same keys in opposite orders, many times: a store that took its locks in
     * request order would deadlock (or, where the database breaks deadlocks, fail or crawl).
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void concurrentBatchesOverTheSameKeysInOppositeOrdersGrantEachKeyOnce() throws Exception {
      Fingerprint fingerprint = newFingerprint();
      for (int round = 0; round < 20; round++) {
        List<ClaimRequest> forward = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
          forward.add(request(newId(), fingerprint, LONG, TTL));
        }
        List<ClaimRequest> backward = new ArrayList<>(forward);
        java.util.Collections.reverse(backward);

        List<List<ClaimResult>> both =
            race(2, racer -> claimAll(store, racer == 0 ? forward : backward));

        for (int i = 0; i < forward.size(); i++) {
          ClaimResult mine = both.get(0).get(i);
          ClaimResult theirs = both.get(1).get(forward.size() - 1 - i);
          long token = present(forward.get(i).id()).token();
          assertThat(List.of(mine, theirs))
              .as("answers for key %d of round %d", i, round)
              .satisfiesExactlyInAnyOrder(
                  r -> assertThat(claimed(r).token()).isEqualTo(token),
                  r -> assertThat(existing(r).token()).isEqualTo(token));
        }
      }
    }

    /**
     * The connection to the server breaks at each round trip of a claim batch in turn: a batch that
     * fails leaves no record held (each is claimed afresh afterwards), and one that succeeds
     * answers what the store holds. Runs for stores with a server ({@link #serverPort()}).
     */
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void aClaimBatchThatFailsPartWayLeavesNoRecordHeld() throws Exception {
      assumeTrue(serverPort() > 0, "the store has no server connection to break");
      Fingerprint fingerprint = newFingerprint();
      int failures = 0;
      try (FaultProxy proxy = FaultProxy.to(serverPort())) {
        for (int passed = 0; passed < 200; passed++) {
          List<ClaimRequest> requests = new ArrayList<>();
          for (int i = 0; i < 5; i++) {
            requests.add(request(newId(), fingerprint, LONG, TTL));
          }
          IdempotencyStore through = createStoreThrough(proxy);
          int droppedBefore = proxy.droppedResponses();
          List<ClaimResult> results = null;
          try {
            assertThat(through.get(newId())).isEmpty(); // connected before the faults begin
            proxy.dropResponsesAfter(passed, 1);
            results = claimAll(through, requests);
          } catch (StoreUnavailableException e) {
            failures++;
          } finally {
            proxy.dropResponses(0);
            through.close();
          }
          boolean dropped = proxy.droppedResponses() > droppedBefore;
          for (int i = 0; i < requests.size(); i++) {
            RecordId id = requests.get(i).id();
            if (results == null) {
              assertThat(store.claim(request(id, fingerprint, LONG, TTL)))
                  .as("a claim after the batch failed at answer %d", passed)
                  .isInstanceOf(Claimed.class);
            } else if (results.get(i) instanceof Claimed c) {
              assertThat(present(id).token()).isEqualTo(c.token());
            }
          }
          if (!dropped) {
            assertThat(results)
                .as("the batch that lost no answer")
                .allMatch(Claimed.class::isInstance);
            break;
          }
        }
      }
      assertThat(failures).as("batches that failed part-way").isPositive();
    }
  }

  /** {@link Batches} through {@code claimAllAsync} and {@code finishAllAsync}. */
  @Nested
  class BatchesAsync extends Batches {

    private final ExecutorService blocking = Executors.newFixedThreadPool(4);

    @AfterEach
    void stopTheBlockingPool() throws InterruptedException {
      blocking.shutdownNow();
      blocking.awaitTermination(10, TimeUnit.SECONDS);
    }

    @Override
    List<ClaimResult> claimAll(IdempotencyStore on, List<ClaimRequest> requests) {
      return awaitStage(on.claimAllAsync(requests, blocking));
    }

    @Override
    List<Boolean> finishAll(IdempotencyStore on, List<Finish> finishes) {
      return awaitStage(on.finishAllAsync(finishes, blocking));
    }
  }

  /**
   * A record this version cannot read ({@link #makeForeign}): answered as {@link
   * UnreadableRecordException}, never overwritten, and it fails a batch that meets it without
   * leaving the batch's other claims held, so that the engine can claim those alone.
   */
  @Nested
  class ForeignRecords {

    private RecordId foreign() {
      RecordId id = newId();
      long token = claimed(store.claim(request(id, newFingerprint(), LONG, TTL))).token();
      assertThat(store.complete(id, token, utf8("a later version's result"), TTL)).isTrue();
      assumeTrue(makeForeign(id), "the store cannot hold a record this version cannot read");
      return id;
    }

    private void assertForeign(RecordId id, Throwable thrown) {
      assertThat(thrown instanceof CompletionException ? thrown.getCause() : thrown)
          .isInstanceOfSatisfying(
              UnreadableRecordException.class,
              e -> {
                assertThat(e.reason()).isEqualTo(UnreadableRecordException.Reason.RECORD_FORMAT);
                assertThat(e.id()).isEqualTo(id);
              });
    }

    private List<ClaimResult> claimAll(List<ClaimRequest> requests, boolean async) {
      return async
          ? awaitStage(store.claimAllAsync(requests, Runnable::run))
          : store.claimAll(requests);
    }

    @Test
    void aClaimOrAReadOfAForeignRecordIsUnreadableAndLeavesItAsItIs() {
      RecordId id = foreign();

      for (int i = 0; i < 2; i++) {
        assertThatThrownBy(() -> store.claim(request(id, newFingerprint(), LONG, TTL)))
            .satisfies(e -> assertForeign(id, e));
        assertThatThrownBy(
                () ->
                    awaitStage(
                        store.claimAsync(request(id, newFingerprint(), LONG, TTL), Runnable::run)))
            .satisfies(e -> assertForeign(id, e));
        assertThatThrownBy(() -> store.get(id)).satisfies(e -> assertForeign(id, e));
      }
    }

    @Test
    void aClaimBatchThatMeetsAForeignRecordFailsWithItAndHoldsNoneOfTheOthers() {
      for (boolean async : new boolean[] {false, true}) {
        RecordId id = foreign();
        List<ClaimRequest> requests = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          requests.add(request(newId(), newFingerprint(), LONG, TTL));
        }
        requests.add(2, request(id, newFingerprint(), LONG, TTL));

        assertThatThrownBy(() -> claimAll(requests, async)).satisfies(e -> assertForeign(id, e));

        for (ClaimRequest r : requests) {
          if (!r.id().equals(id)) {
            assertThat(store.get(r.id())).as("%s after the failed batch", r.id()).isEmpty();
            assertThat(claimed(store.claim(r)).stolen()).isFalse();
          }
        }
        assertThatThrownBy(() -> store.get(id)).satisfies(e -> assertForeign(id, e));
      }
    }

    /**
     * The batch stole a lapsed lease before it met the foreign record. It fails, and gives its
     * steal back without deleting the record: the next claim takes the key at once, stolen, with
     * the recovery point its first holder saved.
     */
    @Test
    void aClaimBatchThatFailsHandsTheLeaseItStoleOver() {
      assumeTrue(endsLeases(), "the store does not end leases early");
      for (boolean async : new boolean[] {false, true}) {
        RecordId id = foreign();
        RecordId stale = newId();
        Fingerprint fingerprint = newFingerprint();
        Claimed first = claimed(store.claim(request(stale, fingerprint, shortLease(), TTL)));
        assertThat(store.checkpoint(stale, first.token(), utf8("charged"), shortLease())).isTrue();
        advanceTime(shortLease());
        // A long lease for the batch's steal: only its hand-over lets the next claim in at once.
        List<ClaimRequest> requests =
            List.of(
                request(stale, fingerprint, LONG, TTL), request(id, newFingerprint(), LONG, TTL));

        assertThatThrownBy(() -> claimAll(requests, async)).satisfies(e -> assertForeign(id, e));

        Claimed next = claimed(store.claim(request(stale, fingerprint, LONG, TTL)));
        assertThat(next.stolen()).isTrue();
        assertThat(next.recoveryPoint()).isEqualTo(utf8("charged"));
      }
    }
  }

  /** awaitChange: who is woken, and by what. */
  @Nested
  class AwaitChange {

    @Test
    void aWaiterIsWokenByComplete() throws Exception {
      assumeTrue(store.notifiesChanges(), "the store does not notify changes");
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      CompletableFuture<Void> change = store.awaitChange(id);

      assertThat(store.complete(id, claimed.token(), utf8("done"), TTL)).isTrue();

      change.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aWaiterIsWokenByRelease() throws Exception {
      assumeTrue(store.notifiesChanges(), "the store does not notify changes");
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      CompletableFuture<Void> change = store.awaitChange(id);

      assertThat(store.release(id, claimed.token())).isTrue();

      change.get(10, TimeUnit.SECONDS);
    }

    /** So that a duplicate waiting for the key takes it over at once ({@code Lease.giveBack}). */
    @Test
    void aWaiterIsWokenByAnEndedLease() throws Exception {
      assumeTrue(store.notifiesChanges(), "the store does not notify changes");
      assumeTrue(endsLeases(), "the store does not end leases early");
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      CompletableFuture<Void> change = store.awaitChange(id);

      assertThat(store.endLease(id, claimed.token())).isTrue();

      change.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aWaiterIsWokenByFailFinalAndNotConfusedByOtherKeys() throws Exception {
      assumeTrue(store.notifiesChanges(), "the store does not notify changes");
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      CompletableFuture<Void> change = store.awaitChange(id);
      RecordId other = newId();
      Claimed otherClaim = claimed(store.claim(request(other, newFingerprint(), LONG, TTL)));
      assertThat(store.complete(other, otherClaim.token(), utf8("other"), TTL)).isTrue();

      assertThat(store.failFinal(id, claimed.token(), utf8("declined"), TTL)).isTrue();

      change.get(10, TimeUnit.SECONDS);
    }

    @Test
    void cancellingAWaitIsHarmless() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
      CompletableFuture<Void> change = store.awaitChange(id);

      change.cancel(true);

      assertThat(store.complete(id, claimed.token(), utf8("done"), TTL)).isTrue();
      assertThat(change).isCancelled();
    }
  }

  /** Calls from a thread whose interrupt flag is set. */
  @Nested
  class InterruptedCallers {

    @Test
    void aCompletionFromAnInterruptedThreadTakesEffectIsReportedAndKeepsTheInterrupt() {
      RecordId id = newId();
      Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));

      // A worker being cancelled still finishes its lease: the write must land and say so.
      Thread.currentThread().interrupt();
      boolean completed;
      try {
        completed = store.complete(id, claimed.token(), utf8("done"), TTL);
      } finally {
        assertThat(Thread.interrupted()).as("the interrupt, still set").isTrue();
      }

      assertThat(completed).isTrue();
      assertThat(present(id).state()).isEqualTo(RecordState.COMPLETED);
    }

    @Test
    void aClaimAndABatchedHeartbeatFromAnInterruptedThreadTakeEffectAndKeepTheInterrupt() {
      RecordId id = newId();

      Thread.currentThread().interrupt();
      Claimed claimed;
      Set<LeaseToken> extended;
      try {
        claimed = claimed(store.claim(request(id, newFingerprint(), shortLease(), TTL)));
        extended = store.heartbeat(List.of(new LeaseToken(id, claimed.token())), LONG);
      } finally {
        assertThat(Thread.interrupted()).as("the interrupt, still set").isTrue();
      }

      assertThat(extended).containsExactly(new LeaseToken(id, claimed.token()));
      assertThat(present(id).leaseRemaining()).isGreaterThan(LONG.minusMinutes(1));
    }
  }

  /**
   * The groups are declared here, so reports name them {@code IdempotencyStoreContract$Claim} and
   * so on whichever store runs them: a failure gets a note naming the store's contract test (the
   * outermost test instance), so a report still says which store broke the contract.
   */
  static final class NamesTheStore implements TestExecutionExceptionHandler {
    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure)
        throws Throwable {
      Object outermost = context.getRequiredTestInstances().getAllInstances().get(0);
      failure.addSuppressed(new StoreUnderTest(outermost.getClass().getName()));
      throw failure;
    }
  }

  /** The note {@link NamesTheStore} adds to a failure. */
  static final class StoreUnderTest extends Exception {
    private static final long serialVersionUID = 1L;

    StoreUnderTest(String contractTest) {
      super("store under test: " + contractTest, null, false, false);
    }
  }

  // ------------------------------------------------------- helpers for subclasses and tests

  /** Returns a record id in a scope no other test uses. */
  protected final RecordId newId() {
    return Samples.newId();
  }

  /** Returns a scope no other test uses. */
  protected final Scope newScope() {
    return Samples.newScope();
  }

  /** Returns a random fingerprint. */
  protected final Fingerprint newFingerprint() {
    return Samples.newFingerprint();
  }

  /** Returns a claim request. */
  protected static ClaimRequest request(
      RecordId id, Fingerprint fingerprint, Duration lease, Duration ttl) {
    return new ClaimRequest(id, fingerprint, lease, ttl);
  }

  /** Asserts that a claim granted a lease, and returns it. */
  protected static Claimed claimed(ClaimResult result) {
    assertThat(result).as("claim result").isInstanceOf(Claimed.class);
    return (Claimed) result;
  }

  /** Asserts that a claim returned the existing record, and returns that record. */
  protected static IdempotencyRecord existing(ClaimResult result) {
    assertThat(result).as("claim result").isInstanceOf(Existing.class);
    return ((Existing) result).record();
  }

  /** Returns the live record, failing if there is none. */
  protected final IdempotencyRecord present(RecordId id) {
    Optional<IdempotencyRecord> record = store.get(id);
    assertThat(record).as("record %s", id).isPresent();
    return record.get();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Asserts the record is as it was, ignoring when it was read. */
  private void assertUnchanged(RecordId id, IdempotencyRecord before) {
    assertThat(withoutObservedAt(present(id)))
        .as("record %s", id)
        .isEqualTo(withoutObservedAt(before));
  }

  private static IdempotencyRecord withoutObservedAt(IdempotencyRecord r) {
    return new IdempotencyRecord(
        r.id(),
        r.state(),
        r.fingerprint(),
        r.token(),
        r.leaseUntil(),
        r.expiresAt(),
        r.recoveryPoint(),
        r.result(),
        Instant.EPOCH,
        r.createdAt());
  }

  @FunctionalInterface
  private interface TokenWrite {
    boolean apply(RecordId id, long token);
  }

  private void assertWrongTokensAreRejected(TokenWrite write) {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(request(id, newFingerprint(), LONG, TTL)));
    assertThat(store.checkpoint(id, claimed.token(), utf8("the owner's step"), LONG)).isTrue();
    IdempotencyRecord before = present(id);

    for (long wrong :
        new long[] {claimed.token() + 1, claimed.token() - 1, 0, Long.MAX_VALUE, Long.MIN_VALUE}) {
      if (wrong != claimed.token()) {
        assertThat(write.apply(id, wrong))
            .as("write with token %d (held: %d)", wrong, claimed.token())
            .isFalse();
      }
    }

    assertUnchanged(id, before);
    assertThat(store.complete(id, claimed.token(), utf8("the owner's result"), TTL)).isTrue();
  }

  private void assertNoWriteSucceeds(RecordId id, long token) {
    IdempotencyRecord before = present(id);

    assertThat(store.complete(id, token, utf8("again"), TTL)).as("complete").isFalse();
    assertThat(store.failFinal(id, token, utf8("again"), TTL)).as("failFinal").isFalse();
    assertThat(store.heartbeat(id, token, LONG)).as("heartbeat").isFalse();
    assertThat(store.checkpoint(id, token, utf8("again"), LONG)).as("checkpoint").isFalse();
    assertThat(store.release(id, token)).as("release").isFalse();

    assertUnchanged(id, before);
  }

  private static final class Stolen {
    final RecordId id;
    final long zombie;
    final long thief;
    final IdempotencyRecord after;

    Stolen(RecordId id, long zombie, long thief, IdempotencyRecord after) {
      this.id = id;
      this.zombie = zombie;
      this.thief = thief;
      this.after = after;
    }
  }

  /** Claims a key with a short lease, lets it end, and steals it with a long one. */
  private Stolen stealOne() {
    RecordId id = newId();
    Fingerprint fingerprint = newFingerprint();
    Claimed zombie = claimed(store.claim(request(id, fingerprint, shortLease(), TTL)));
    assertThat(store.checkpoint(id, zombie.token(), utf8("zombie step"), shortLease())).isTrue();
    advanceTime(shortLease());
    Claimed thief = claimed(store.claim(request(id, fingerprint, LONG, TTL)));
    assertThat(thief.stolen()).isTrue();
    return new Stolen(id, zombie.token(), thief.token(), present(id));
  }

  private int purgeAll(int batchSize) {
    int total = 0;
    // Bounded: a store with other tests' garbage still drains in a few rounds.
    for (int round = 0; round < 10_000; round++) {
      int purged = store.purgeExpired(batchSize);
      assertThat(purged).as("purged in one batch").isBetween(0, batchSize);
      total += purged;
      if (purged < batchSize) {
        return total;
      }
    }
    throw new AssertionError("purgeExpired(" + batchSize + ") kept returning full batches");
  }

  private static void assertSameBytes(byte @Nullable [] actual, byte[] expected, String what) {
    assertThat(actual).as(what).isNotNull();
    assertThat(actual.length).as("%s length", what).isEqualTo(expected.length);
    for (int i = 0; i < expected.length; i++) {
      if (actual[i] != expected[i]) {
        throw new AssertionError(
            what + " differs at byte " + i + ": expected " + expected[i] + " but was " + actual[i]);
      }
    }
  }

  private static List<Claimed> claimedOnly(List<ClaimResult> results) {
    return results.stream().filter(Claimed.class::isInstance).map(Claimed.class::cast).toList();
  }

  @FunctionalInterface
  private interface Attempt<T> {
    T run(int racer) throws Exception;
  }

  /**
   * Runs {@code attempt} on {@code racers} threads released together, and returns what each
   * returned, in order.
   */
  private static <T> List<T> race(int racers, Attempt<T> attempt) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(racers);
    CyclicBarrier start = new CyclicBarrier(racers);
    try {
      List<Future<T>> futures = new ArrayList<>();
      for (int i = 0; i < racers; i++) {
        int racer = i;
        futures.add(
            pool.submit(
                () -> {
                  start.await(30, TimeUnit.SECONDS);
                  return attempt.run(racer);
                }));
      }
      List<T> results = new ArrayList<>();
      for (Future<T> future : futures) {
        results.add(future.get(60, TimeUnit.SECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  /** The stage's value, or what it failed with, unwrapped as the contract requires. */
  private static <T> T awaitStage(CompletionStage<T> stage) {
    CompletableFuture<T> future = stage.toCompletableFuture();
    try {
      return future.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof CompletionException) {
        throw new AssertionError("the stage failed with a wrapped exception", e.getCause());
      }
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new AssertionError(e.getCause());
    } catch (InterruptedException | TimeoutException e) {
      throw new AssertionError("the stage did not complete", e);
    }
  }
}

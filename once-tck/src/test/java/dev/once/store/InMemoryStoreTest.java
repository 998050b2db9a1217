package dev.once.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.tck.FakeClock;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the in-memory store does beyond the shared contract: its options, its bound, its waiters.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InMemoryStoreTest {

  private static final Fingerprint FINGERPRINT =
      new Fingerprint(1, "00112233445566778899aabbccddeeff");
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofHours(1);

  private final FakeClock clock = FakeClock.create();

  // ---------------------------------------------------------------- builder

  @Test
  void builderRejectsANullClock() {
    assertThatThrownBy(() -> InMemoryStore.builder().clock(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("clock");
  }

  @Test
  void builderRejectsMaxRecordsBelowOne() {
    assertThatThrownBy(() -> InMemoryStore.builder().maxRecords(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxRecords")
        .hasMessageContaining("0");
    assertThatThrownBy(() -> InMemoryStore.builder().maxRecords(-5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-5");
  }

  @Test
  void createUsesTheSystemClock() {
    InMemoryStore store = InMemoryStore.create();
    Instant before = Clock.systemUTC().instant();

    Claimed claimed = (Claimed) store.claim(request(id("a"), LEASE));

    assertThat(claimed.leaseUntil().minus(LEASE)).isBetween(before, Clock.systemUTC().instant());
    assertThat(store.toString()).contains("maxRecords=" + InMemoryStore.DEFAULT_MAX_RECORDS);
  }

  @Test
  void theFirstTokenIsOneAndTokensAreStoreWide() {
    InMemoryStore store = storeOf(10);

    long a = ((Claimed) store.claim(request(id("a"), LEASE))).token();
    long b = ((Claimed) store.claim(request(id("b"), LEASE))).token();

    assertThat(a).isEqualTo(1);
    assertThat(b).isEqualTo(2);
  }

  // ---------------------------------------------------------------- clear

  @Test
  void clearForgetsEveryRecordButNeverGrantsATokenTwice() {
    InMemoryStore store = storeOf(10);
    long finished = ((Claimed) store.claim(request(id("a"), LEASE))).token();
    assertThat(store.complete(id("a"), finished, new byte[] {1}, TTL)).isTrue();
    long running = ((Claimed) store.claim(request(id("b"), LEASE))).token();
    CompletableFuture<Void> waiting = store.awaitChange(id("b"));

    store.clear();

    assertThat(store.get(id("a"))).isEmpty();
    assertThat(store.get(id("b"))).isEmpty();
    assertThat(waiting).as("a waiter is woken").isDone();
    assertThat(store.complete(id("b"), running, new byte[0], TTL))
        .as("the forgotten lease is lost")
        .isFalse();
    long again = ((Claimed) store.claim(request(id("a"), LEASE))).token();
    assertThat(again).isGreaterThan(running);
  }

  // ---------------------------------------------------------------- bounded capacity

  @Test
  void aFullStoreRefusesANewClaimWithStoreFullException() {
    InMemoryStore store = storeOf(3);
    fill(store, 3);

    assertThatThrownBy(() -> store.claim(request(id("one too many"), LEASE)))
        .isInstanceOf(StoreFullException.class)
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("3");
    assertThat(store.get(id("one too many"))).isEmpty();
  }

  @Test
  void aFullStoreStillServesItsRecords() {
    InMemoryStore store = storeOf(2);
    List<Long> tokens = fill(store, 2);

    assertThat(store.claim(request(id("key-0"), LEASE))).isInstanceOf(Existing.class);
    assertThat(store.get(id("key-1"))).isPresent();
    assertThat(store.heartbeat(id("key-0"), tokens.get(0), LEASE)).isTrue();
    assertThat(store.complete(id("key-0"), tokens.get(0), new byte[] {1}, TTL)).isTrue();
    assertThat(store.claim(request(id("key-0"), LEASE))).isInstanceOf(Existing.class);
  }

  @Test
  void aFullStoreStealsAnEndedLeaseOnAKeyItHolds() {
    InMemoryStore store = storeOf(1);
    fill(store, 1);
    clock.advance(LEASE);

    Claimed thief = (Claimed) store.claim(request(id("key-0"), LEASE));

    assertThat(thief.stolen()).isTrue();
  }

  @Test
  void aFullStoreNeverEvictsALiveRecord() {
    InMemoryStore store = storeOf(2);
    fill(store, 2);
    clock.advance(LEASE.multipliedBy(10));

    assertThatThrownBy(() -> store.claim(request(id("new"), LEASE)))
        .isInstanceOf(StoreFullException.class);

    assertThat(store.get(id("key-0"))).isPresent();
    assertThat(store.get(id("key-1"))).isPresent();
  }

  @Test
  void aFullStoreMakesRoomByPurgingExpiredRecords() {
    InMemoryStore store = storeOf(2);
    List<Long> tokens = fill(store, 2);
    assertThat(store.complete(id("key-0"), tokens.get(0), new byte[] {1}, Duration.ofMinutes(1)))
        .isTrue();
    clock.advance(Duration.ofMinutes(1));

    assertThat(store.claim(request(id("new"), LEASE))).isInstanceOf(Claimed.class);

    assertThat(store.recordCount()).isEqualTo(2);
    assertThat(store.get(id("key-0"))).isEmpty();
    assertThat(store.get(id("key-1"))).isPresent();
  }

  @Test
  void aReleaseFreesRoom() {
    InMemoryStore store = storeOf(1);
    List<Long> tokens = fill(store, 1);

    assertThat(store.release(id("key-0"), tokens.get(0))).isTrue();

    assertThat(store.recordCount()).isZero();
    assertThat(store.claim(request(id("new"), LEASE))).isInstanceOf(Claimed.class);
  }

  @Test
  void aClaimOnAnExpiredKeyReusesItsRoomEvenWhenFull() {
    InMemoryStore store = storeOf(1);
    List<Long> tokens = fill(store, 1);
    assertThat(store.complete(id("key-0"), tokens.get(0), new byte[0], Duration.ofMinutes(1)))
        .isTrue();
    clock.advance(Duration.ofMinutes(1));

    Claimed fresh = (Claimed) store.claim(request(id("key-0"), LEASE));

    assertThat(fresh.stolen()).isFalse();
    assertThat(store.recordCount()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- purge

  @Test
  void purgeExpiredCountsExactlyAndKeepsLiveRecords() {
    InMemoryStore store = storeOf(100);
    List<Long> tokens = fill(store, 8);
    for (int i = 0; i < 5; i++) {
      assertThat(store.complete(id("key-" + i), tokens.get(i), new byte[0], Duration.ofMinutes(1)))
          .isTrue();
    }
    clock.advance(Duration.ofMinutes(1));

    assertThat(store.purgeExpired(2)).isEqualTo(2);
    assertThat(store.purgeExpired(10)).isEqualTo(3);
    assertThat(store.purgeExpired(10)).isZero();
    assertThat(store.recordCount()).isEqualTo(3);
  }

  @Test
  void purgeExpiredOnAnEmptyStoreDeletesNothing() {
    assertThat(storeOf(10).purgeExpired(1)).isZero();
  }

  // ---------------------------------------------------------------- arguments

  @Test
  void durationsThatAreNotPositiveAreRejected() {
    InMemoryStore store = storeOf(10);
    long token = ((Claimed) store.claim(request(id("a"), LEASE))).token();

    assertThatThrownBy(() -> store.heartbeat(id("a"), token, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lease");
    assertThatThrownBy(() -> store.checkpoint(id("a"), token, new byte[0], Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lease");
    assertThatThrownBy(() -> store.complete(id("a"), token, new byte[0], Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThatThrownBy(() -> store.failFinal(id("a"), token, new byte[0], null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ttl");
    assertThat(store.get(id("a")).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);
  }

  @Test
  void nullArgumentsAreRejected() {
    InMemoryStore store = storeOf(10);
    long token = ((Claimed) store.claim(request(id("a"), LEASE))).token();

    assertThatThrownBy(() -> store.claim(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.get(null)).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.complete(id("a"), token, null, TTL))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.checkpoint(id("a"), token, null, LEASE))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> store.awaitChange(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void aHugeTtlMeansNeverInsteadOfAnOverflow() {
    InMemoryStore store = storeOf(10);
    Duration forever = Duration.ofSeconds(Long.MAX_VALUE);

    Claimed claimed =
        (Claimed) store.claim(new ClaimRequest(id("a"), FINGERPRINT, forever, forever));

    assertThat(claimed.leaseUntil()).isEqualTo(Instant.MAX);
    assertThat(store.complete(id("a"), claimed.token(), new byte[0], forever)).isTrue();
    assertThat(store.get(id("a")).orElseThrow().expiresAt()).isEqualTo(Instant.MAX);
  }

  @Test
  void byteArraysAreHandedOverWithoutCopying() {
    InMemoryStore store = storeOf(10);
    long token = ((Claimed) store.claim(request(id("a"), LEASE))).token();
    byte[] result = {1, 2, 3};

    assertThat(store.complete(id("a"), token, result, TTL)).isTrue();

    assertThat(store.get(id("a")).orElseThrow().result()).isSameAs(result);
  }

  // ---------------------------------------------------------------- waiters

  @Test
  void aCancelledWaitLeavesNothingBehind() {
    InMemoryStore store = storeOf(10);
    CompletableFuture<Void> first = store.awaitChange(id("a"));
    CompletableFuture<Void> second = store.awaitChange(id("a"));
    assertThat(store.waiterCount()).isEqualTo(2);

    first.cancel(false);
    second.cancel(false);

    assertThat(store.waiterCount()).isZero();
  }

  @Test
  void aTimedOutWaitLeavesNothingBehind() throws Exception {
    InMemoryStore store = storeOf(10);
    CompletableFuture<Void> wait = store.awaitChange(id("a")).orTimeout(10, TimeUnit.MILLISECONDS);

    assertThatThrownBy(() -> wait.get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(TimeoutException.class);

    // The clean-up runs on the thread that timed the future out, possibly just after get() returns.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (store.waiterCount() != 0 && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(store.waiterCount()).isZero();
  }

  @Test
  void aChangeWakesEveryWaiterOnItsKeyAndForgetsThem() {
    InMemoryStore store = storeOf(10);
    long token = ((Claimed) store.claim(request(id("a"), LEASE))).token();
    List<CompletableFuture<Void>> waits = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      waits.add(store.awaitChange(id("a")));
    }
    CompletableFuture<Void> elsewhere = store.awaitChange(id("b"));

    assertThat(store.complete(id("a"), token, new byte[0], TTL)).isTrue();

    assertThat(waits).allMatch(CompletableFuture::isDone);
    assertThat(elsewhere).isNotDone();
    assertThat(store.waiterCount()).isEqualTo(1);
  }

  @Test
  void heartbeatsAndRefusedWritesWakeNobody() {
    InMemoryStore store = storeOf(10);
    long token = ((Claimed) store.claim(request(id("a"), LEASE))).token();
    CompletableFuture<Void> wait = store.awaitChange(id("a"));

    assertThat(store.heartbeat(id("a"), token, LEASE)).isTrue();
    assertThat(store.checkpoint(id("a"), token, new byte[] {1}, LEASE)).isTrue();
    assertThat(store.complete(id("a"), token + 1, new byte[0], TTL)).isFalse();
    assertThat(store.claim(request(id("a"), LEASE))).isInstanceOf(Existing.class);

    assertThat(wait).isNotDone();
  }

  @Test
  void aStealWakesWaiters() {
    InMemoryStore store = storeOf(10);
    store.claim(request(id("a"), LEASE));
    clock.advance(LEASE);
    CompletableFuture<Void> wait = store.awaitChange(id("a"));

    assertThat(((Claimed) store.claim(request(id("a"), LEASE))).stolen()).isTrue();

    assertThat(wait).isDone();
  }

  @Test
  void closeWakesEveryWaiterAndKeepsTheRecords() {
    InMemoryStore store = storeOf(10);
    store.claim(request(id("a"), LEASE));
    CompletableFuture<Void> wait = store.awaitChange(id("a"));

    store.close();

    assertThat(wait).isDone();
    assertThat(store.waiterCount()).isZero();
    assertThat(store.get(id("a"))).isPresent();
  }

  // ---------------------------------------------------------------- helpers

  private InMemoryStore storeOf(int maxRecords) {
    return InMemoryStore.builder().clock(clock).maxRecords(maxRecords).build();
  }

  private static RecordId id(String key) {
    return RecordId.of(Scope.GLOBAL, IdempotencyKey.of(key.replace(' ', '-')));
  }

  private static ClaimRequest request(RecordId id, Duration lease) {
    return new ClaimRequest(id, FINGERPRINT, lease, TTL);
  }

  /** Claims key-0 … key-(n-1) and returns their tokens. */
  private static List<Long> fill(InMemoryStore store, int n) {
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      tokens.add(((Claimed) store.claim(request(id("key-" + i), LEASE))).token());
    }
    return tokens;
  }

  @Test
  void theInFlightListingLooksAtABoundedNumberOfEntriesAndSaysWhenItStopped() {
    InMemoryStore store = InMemoryStore.builder().clock(clock).build();
    for (int i = 0; i < InMemoryStore.IN_FLIGHT_SCAN_BUDGET; i++) {
      store.claim(
          new ClaimRequest(
              RecordId.of(Scope.of("budget"), IdempotencyKey.of("k" + i)),
              FINGERPRINT,
              LEASE,
              TTL));
    }
    InFlight atTheBudget = store.inFlight(Duration.ZERO, 3);
    assertThat(atTheBudget.complete()).isTrue();
    assertThat(atTheBudget.records()).hasSize(3);

    store.claim(
        new ClaimRequest(
            RecordId.of(Scope.of("budget"), IdempotencyKey.of("one-more")),
            FINGERPRINT,
            LEASE,
            TTL));

    InFlight beyond = store.inFlight(Duration.ZERO, 3);
    assertThat(beyond.complete()).isFalse();
    assertThat(beyond.records()).hasSize(3);
  }
}

package dev.once.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Fingerprint;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import dev.once.tck.FaultyStore.Call;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The calls a lease holder makes besides finishing, ending the lease and beating, meet the faults
 * switched on, blocking or asynchronous, and the asynchronous ones reach the store's own
 * asynchronous calls, as a store with an asynchronous client is used in production. Healing one
 * call leaves the faults of the others.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FaultyStoreTest {

  private static final Duration LEASE = Duration.ofMinutes(1);
  private static final Duration WITHIN = Duration.ofSeconds(5);

  /** An executor a call that reaches the store's own asynchronous method never uses. */
  private static final Executor NO_BLOCKING_FALLBACK =
      task -> {
        throw new AssertionError("the blocking fallback ran");
      };

  private final InMemoryStore memory = InMemoryStore.create();
  private final AtomicInteger ownEndLeases = new AtomicInteger();
  private final AtomicInteger ownHeartbeats = new AtomicInteger();

  /** The store in memory, counting the calls that reach its asynchronous methods. */
  private final IdempotencyStore asynchronous =
      new ForwardingStore() {
        @Override
        protected IdempotencyStore delegate() {
          return memory;
        }

        @Override
        public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
          ownEndLeases.incrementAndGet();
          return memory.endLeaseAsync(id, token, blocking);
        }

        @Override
        public CompletionStage<Set<LeaseToken>> heartbeatAsync(
            Collection<LeaseToken> leases, Duration lease, Executor blocking) {
          ownHeartbeats.incrementAndGet();
          return CompletableFuture.completedFuture(memory.heartbeat(leases, lease));
        }
      };

  private final FaultyStore store = FaultyStore.wrap(asynchronous);
  private final RecordId id = Samples.newId();
  private final Fingerprint fingerprint = Samples.newFingerprint();

  @Test
  void endingALeaseMeetsAnOutageAndALostReply() {
    long token = claim();
    store.down(Call.END_LEASE);

    assertThatThrownBy(() -> store.endLease(id, token))
        .isInstanceOf(StoreUnavailableException.class);
    assertThat(store.endLeaseAsync(id, token, NO_BLOCKING_FALLBACK))
        .failsWithin(WITHIN)
        .withThrowableThat()
        .withCauseInstanceOf(StoreUnavailableException.class);
    assertThat(ownEndLeases).as("an outage never reaches the store").hasValue(0);
    assertThat(store.calls(Call.END_LEASE)).isEqualTo(2);
    assertThat(store.answered(Call.END_LEASE)).isZero();
    assertThat(claimAgain()).as("the lease still runs").isInstanceOf(ClaimResult.Existing.class);

    store.heal().loseReplies(); // every fenced write, ending a lease among them
    assertThat(store.endLeaseAsync(id, token, NO_BLOCKING_FALLBACK))
        .failsWithin(WITHIN)
        .withThrowableThat()
        .withCauseInstanceOf(StoreUnavailableException.class);

    assertThat(ownEndLeases).hasValue(1);
    assertThat(store.answered(Call.END_LEASE)).isEqualTo(1);
    assertThat(claimAgain())
        .as("the lease ended although its reply was lost")
        .isInstanceOf(ClaimResult.Claimed.class);
  }

  @Test
  void anAsynchronousHeartbeatReachesTheStoresOwnCallAndMeetsAnOutage() {
    Set<LeaseToken> leases = Set.of(new LeaseToken(id, claim()));

    assertThat(store.heartbeatAsync(leases, LEASE, NO_BLOCKING_FALLBACK))
        .succeedsWithin(WITHIN)
        .isEqualTo(leases);
    assertThat(ownHeartbeats).hasValue(1);
    assertThat(store.answered(Call.HEARTBEAT)).isEqualTo(1);

    store.down(Call.HEARTBEAT);
    assertThat(store.heartbeatAsync(leases, LEASE, NO_BLOCKING_FALLBACK))
        .failsWithin(WITHIN)
        .withThrowableThat()
        .withCauseInstanceOf(StoreUnavailableException.class);
    assertThat(ownHeartbeats).hasValue(1);
    assertThat(store.calls(Call.HEARTBEAT)).isEqualTo(2);
  }

  @Test
  void healingOneCallLetsItGoOnAndLeavesEveryOtherFault() throws Exception {
    store.pause(Call.CLAIM, Call.GET).down(Call.END_LEASE);
    ExecutorService callers = Executors.newFixedThreadPool(2);
    try {
      Future<ClaimResult> claimed = callers.submit(() -> store.claim(request()));
      Future<Optional<IdempotencyRecord>> read = callers.submit(() -> store.get(id));
      Eventually.assertThat(
          "both calls paused",
          WITHIN,
          () -> store.calls(Call.CLAIM) == 1 && store.calls(Call.GET) == 1);

      store.heal(Call.CLAIM);

      ClaimResult result = claimed.get(WITHIN.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(result).isInstanceOf(ClaimResult.Claimed.class);
      // Long enough for a read let go to be answered many times over.
      assertThatThrownBy(() -> read.get(200, TimeUnit.MILLISECONDS))
          .as("the read is still paused")
          .isInstanceOf(TimeoutException.class);
      long token = ((ClaimResult.Claimed) result).token();
      assertThatThrownBy(() -> store.endLease(id, token))
          .as("ending a lease is still down")
          .isInstanceOf(StoreUnavailableException.class);

      store.heal();

      assertThat(read.get(WITHIN.toMillis(), TimeUnit.MILLISECONDS)).isPresent();
      assertThat(store.endLease(id, token)).isTrue();
    } finally {
      callers.shutdownNow();
    }
  }

  private long claim() {
    return ((ClaimResult.Claimed) claimAgain()).token();
  }

  private ClaimResult claimAgain() {
    return memory.claim(request());
  }

  private ClaimRequest request() {
    return new ClaimRequest(id, fingerprint, LEASE, Duration.ofHours(1));
  }
}

package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The JDBC stores' own checks of the store contract, run against each real database. The shared
 * contract kit (once-tck) covers the contract in full; these cover the SQL paths each dialect owns:
 * the claim primitive's branches, fencing, steal with recovery point, expiry, purge, the herd.
 */
abstract class JdbcStoreBehaviour {

  static final Fingerprint FP = new Fingerprint(1, "00112233445566778899aabbccddeeff");
  static final Fingerprint OTHER_FP = new Fingerprint(1, "ffeeddccbbaa99887766554433221100");
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration SHORT = Duration.ofMillis(300);
  static final Duration TTL = Duration.ofHours(1);

  IdempotencyStore store;

  /** A fresh store on an empty table of the subclass's own. */
  abstract IdempotencyStore openStoreOnEmptyTable() throws Exception;

  @BeforeEach
  void open() throws Exception {
    store = openStoreOnEmptyTable();
  }

  @AfterEach
  void close() {
    store.close();
  }

  static RecordId newId() {
    return RecordId.of(
        Scope.of("tenant-" + UUID.randomUUID()), IdempotencyKey.of("key-" + UUID.randomUUID()));
  }

  static ClaimRequest request(RecordId id, Duration lease) {
    return new ClaimRequest(id, FP, lease, TTL);
  }

  ClaimResult.Claimed claim(RecordId id, Duration lease) {
    ClaimResult r = store.claim(request(id, lease));
    assertThat(r).isInstanceOf(ClaimResult.Claimed.class);
    return (ClaimResult.Claimed) r;
  }

  static void sleep(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis() + 50);
  }

  @Test
  void aFreshClaimGrantsALeaseThatIsNotStolen() {
    ClaimResult.Claimed c = claim(newId(), LEASE);
    assertThat(c.stolen()).isFalse();
    assertThat(c.recoveryPoint()).isNull();
    assertThat(c.leaseUntil()).isAfter(java.time.Instant.now().minusSeconds(60));
  }

  @Test
  void aSecondClaimSeesTheRecordInProgress() {
    RecordId id = newId();
    ClaimResult.Claimed first = claim(id, LEASE);
    ClaimResult second = store.claim(request(id, LEASE));
    assertThat(second)
        .isInstanceOfSatisfying(
            ClaimResult.Existing.class,
            e -> {
              assertThat(e.record().state()).isEqualTo(RecordState.IN_PROGRESS);
              assertThat(e.record().token()).isEqualTo(first.token());
              assertThat(e.record().leaseRemaining()).isPositive();
            });
  }

  @Test
  void aCompletedRecordIsReplayedWithItsResult() {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.complete(id, c.token(), "paid".getBytes(StandardCharsets.UTF_8), TTL))
        .isTrue();
    ClaimResult again = store.claim(request(id, LEASE));
    assertThat(again)
        .isInstanceOfSatisfying(
            ClaimResult.Existing.class,
            e -> {
              assertThat(e.record().state()).isEqualTo(RecordState.COMPLETED);
              assertThat(e.record().result()).isEqualTo("paid".getBytes(StandardCharsets.UTF_8));
            });
    assertThat(store.get(id)).get().extracting(r -> r.state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void aFinalFailureIsReplayedToo() {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.failFinal(id, c.token(), new byte[] {4, 0, 4}, TTL)).isTrue();
    assertThat(store.get(id))
        .get()
        .satisfies(
            r -> {
              assertThat(r.state()).isEqualTo(RecordState.FAILED_FINAL);
              assertThat(r.result()).containsExactly(4, 0, 4);
            });
  }

  @Test
  void aStaleLeaseIsStolenWithTheRecoveryPointAndTheZombieIsFencedOff() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed first = claim(id, SHORT);
    assertThat(store.checkpoint(id, first.token(), new byte[] {1, 2, 3}, SHORT)).isTrue();
    sleep(SHORT);
    ClaimResult.Claimed thief = claim(id, LEASE);
    assertThat(thief.stolen()).isTrue();
    assertThat(thief.recoveryPoint()).containsExactly(1, 2, 3);
    assertThat(thief.token()).isGreaterThan(first.token());
    assertThat(store.complete(id, first.token(), new byte[] {9}, TTL)).isFalse();
    assertThat(store.heartbeat(id, first.token(), LEASE)).isFalse();
    assertThat(store.release(id, first.token())).isFalse();
    assertThat(store.complete(id, thief.token(), new byte[] {7}, TTL)).isTrue();
    assertThat(store.get(id)).get().satisfies(r -> assertThat(r.result()).containsExactly(7));
  }

  /**
   * A batch's transaction committed, but its answer was lost: the store cannot know whether its
   * claims stand, so it gives them back. The fresh one is released; the steal, whose first holder
   * saved a recovery point, keeps its record and has its lease ended (a release would delete the
   * recovery point of work that may have had its effect), so the next claim resumes at once.
   */
  @Test
  void aClaimBatchWhoseCommitAnswerIsLostGivesBackItsClaimsAndKeepsAStolenRecord()
      throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        ((JdbcStore) store).connections.control() == TransactionControl.OWN,
        "the store's own transactions only");
    RecordId stale = newId();
    ClaimResult.Claimed first = claim(stale, SHORT);
    assertThat(store.checkpoint(stale, first.token(), new byte[] {1, 2, 3}, SHORT)).isTrue();
    sleep(SHORT);
    RecordId fresh = newId();
    LosingCommitAnswers losing = LosingCommitAnswers.around((JdbcStore) store);
    IdempotencyStore batches = losing.operations((JdbcStore) store);
    losing.loseNextCommitAnswer();

    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> batches.claimAll(List.of(request(stale, LEASE), request(fresh, LEASE))))
        .isInstanceOf(dev.once.store.StoreUnavailableException.class);

    assertThat(store.get(fresh)).as("the fresh claim, released").isEmpty();
    ClaimResult.Claimed next = claim(stale, LEASE);
    assertThat(next.stolen()).as("the batch's steal, handed over at once").isTrue();
    assertThat(next.recoveryPoint()).containsExactly(1, 2, 3);
  }

  @Test
  void aStaleLeaseIsNotStolenByADifferentRequest() throws Exception {
    RecordId id = newId();
    claim(id, SHORT);
    sleep(SHORT);
    ClaimResult other = store.claim(new ClaimRequest(id, OTHER_FP, LEASE, TTL));
    assertThat(other)
        .isInstanceOfSatisfying(
            ClaimResult.Existing.class, e -> assertThat(e.record().isStealable()).isTrue());
  }

  @Test
  void aHeartbeatKeepsTheLeaseAlive() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, SHORT);
    assertThat(store.heartbeat(id, c.token(), LEASE)).isTrue();
    sleep(SHORT);
    assertThat(store.claim(request(id, LEASE))).isInstanceOf(ClaimResult.Existing.class);
  }

  @Test
  void aBatchedHeartbeatOfTenThousandLeasesIsOneOperationOfFewStatements() throws Exception {
    List<LeaseToken> held = claimConcurrently(10_000);
    LeaseToken released = held.remove(0);
    assertThat(store.release(released.id(), released.token())).isTrue();
    LeaseToken wrongToken = held.remove(0);
    List<LeaseToken> batch = new ArrayList<>(held);
    batch.add(released);
    batch.add(new LeaseToken(wrongToken.id(), wrongToken.token() + 1));
    CountingConnections counting = CountingConnections.around((JdbcStore) store);
    Duration longer = Duration.ofMinutes(10);

    Set<LeaseToken> extended = counting.store((JdbcStore) store).heartbeat(batch, longer);

    assertThat(extended).hasSize(held.size()).isEqualTo(new HashSet<>(held));
    assertThat(counting.opened).as("operations").hasValue(1);
    assertThat(counting.prepared.get()).as("statements").isBetween(1, 10);
    for (LeaseToken lease : List.of(held.get(0), held.get(held.size() - 1))) {
      assertThat(store.get(lease.id()))
          .get()
          .satisfies(
              r -> {
                assertThat(r.leaseRemaining()).isGreaterThan(longer.minusMinutes(1));
                assertThat(r.expiresAt()).isAfterOrEqualTo(r.leaseUntil());
              });
    }
    assertThat(store.get(wrongToken.id()))
        .get()
        .satisfies(r -> assertThat(r.leaseRemaining()).isLessThan(LEASE));
  }

  @Test
  void aBatchedHeartbeatNamingOneRecordTwiceIsRefused() {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    List<LeaseToken> twice =
        List.of(new LeaseToken(id, c.token()), new LeaseToken(id, c.token() + 1));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> store.heartbeat(twice, LEASE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(id.toString());
  }

  /**
   * Claims {@code n} fresh keys from many threads at once (a group commit makes that fast); returns
   * their leases.
   */
  List<LeaseToken> claimConcurrently(int n) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<LeaseToken>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        futures.add(
            pool.submit(
                () -> {
                  RecordId id = newId();
                  return new LeaseToken(id, claim(id, LEASE).token());
                }));
      }
      List<LeaseToken> leases = new ArrayList<>();
      for (Future<LeaseToken> f : futures) {
        leases.add(f.get(60, TimeUnit.SECONDS));
      }
      return leases;
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aReleasedKeyIsClaimedAfreshWithALargerToken() {
    RecordId id = newId();
    ClaimResult.Claimed first = claim(id, LEASE);
    assertThat(store.release(id, first.token())).isTrue();
    assertThat(store.get(id)).isEmpty();
    ClaimResult.Claimed second = claim(id, LEASE);
    assertThat(second.stolen()).isFalse();
    assertThat(second.token()).isGreaterThan(first.token());
    assertThat(store.complete(id, first.token(), new byte[] {1}, TTL)).isFalse();
  }

  @Test
  void anExpiredRecordBehavesAsAbsentAndIsPurged() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.complete(id, c.token(), new byte[] {1}, SHORT)).isTrue();
    sleep(SHORT);
    assertThat(store.get(id)).isEmpty();
    assertThat(store.purgeExpired(100)).isEqualTo(1);
    assertThat(store.purgeExpired(100)).isZero();
    ClaimResult.Claimed again = claim(id, LEASE);
    assertThat(again.stolen()).isFalse();
    assertThat(again.token()).isGreaterThan(c.token());
  }

  @Test
  void anExpiredRecordIsClaimedAfreshBeforeItIsPurged() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.checkpoint(id, c.token(), new byte[] {5}, LEASE)).isTrue();
    assertThat(store.complete(id, c.token(), new byte[] {1}, SHORT)).isTrue();
    sleep(SHORT);
    ClaimResult.Claimed again =
        (ClaimResult.Claimed) store.claim(new ClaimRequest(id, OTHER_FP, LEASE, TTL));
    assertThat(again.stolen()).isFalse();
    assertThat(again.recoveryPoint()).isNull();
    assertThat(store.get(id))
        .get()
        .satisfies(
            r -> {
              assertThat(r.fingerprint()).isEqualTo(OTHER_FP);
              assertThat(r.result()).isNull();
            });
  }

  @Test
  void purgeDeletesAtMostOneBatchAndLeavesLiveRecords() throws Exception {
    RecordId live = newId();
    claim(live, LEASE);
    for (int i = 0; i < 5; i++) {
      RecordId id = newId();
      ClaimResult.Claimed c = claim(id, LEASE);
      store.complete(id, c.token(), new byte[] {1}, Duration.ofMillis(1));
    }
    sleep(Duration.ofMillis(10));
    assertThat(store.purgeExpired(3)).isEqualTo(3);
    assertThat(store.purgeExpired(3)).isEqualTo(2);
    assertThat(store.get(live)).isPresent();
  }

  @Test
  void keysAreCaseSensitiveAndScopesAreUnicode() {
    Scope scope = Scope.of("Zürich", "東京", "🦄");
    RecordId lower = RecordId.of(scope, IdempotencyKey.of("abc"));
    RecordId upper = RecordId.of(scope, IdempotencyKey.of("ABC"));
    ClaimResult.Claimed a = claim(lower, LEASE);
    ClaimResult.Claimed b = claim(upper, LEASE);
    assertThat(a.token()).isNotEqualTo(b.token());
    assertThat(store.get(lower)).get().extracting(r -> r.id().scope()).isEqualTo(scope);
  }

  @Test
  void largeBinaryResultsRoundTripExactly() {
    byte[] body = new byte[3 * 1024 * 1024];
    new Random(42).nextBytes(body);
    for (int i = 0; i < 256; i++) {
      body[i] = (byte) i;
    }
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.complete(id, c.token(), body, TTL)).isTrue();
    assertThat(store.get(id)).get().satisfies(r -> assertThat(r.result()).isEqualTo(body));
  }

  @Test
  void aHerdOfSixtyFourClaimsOnOneKeyGrantsExactlyOneLease() throws Exception {
    int threads = 64;
    RecordId id = newId();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<ClaimResult>> results = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  return store.claim(request(id, LEASE));
                }));
      }
      start.countDown();
      int claimed = 0;
      for (Future<ClaimResult> f : results) {
        if (f.get(60, TimeUnit.SECONDS) instanceof ClaimResult.Claimed) {
          claimed++;
        }
      }
      assertThat(claimed).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * An operation's atomic unit that ends in an Error, not an exception, still leaves none of its
   * writes behind: in a group commit the batch's other operations commit, and on a store's own
   * connection auto-commit is turned back on, which would commit whatever the unit had written.
   */
  @Test
  void anErrorInsideAnAtomicUnitLeavesNoneOfItsWritesBehind() throws Exception {
    Connections connections = ((JdbcStore) store).connections;
    String table = "once_atomic_probe_" + UUID.randomUUID().toString().replace("-", "");
    connections.run(session -> update(session, "CREATE TABLE " + table + " (x INTEGER)"), 5);
    try {
      assertThatThrownBy(
              () ->
                  connections.run(
                      session ->
                          session.atomically(
                              unit -> {
                                update(unit.joined(), "INSERT INTO " + table + " (x) VALUES (1)");
                                throw new StackOverflowError("a defect inside the atomic unit");
                              }),
                      5))
          .isInstanceOf(StackOverflowError.class);
      // A write of the store's own after it: in a group commit, it commits the batch.
      RecordId id = newId();
      ClaimResult.Claimed c = claim(id, LEASE);
      assertThat(store.complete(id, c.token(), new byte[] {1}, TTL)).isTrue();
      long rows =
          connections.run(
              session -> {
                try (PreparedStatement ps = session.prepare("SELECT count(*) FROM " + table);
                    ResultSet rs = ps.executeQuery()) {
                  rs.next();
                  return rs.getLong(1);
                }
              },
              5);
      assertThat(rows).as("rows the failed unit wrote").isZero();
    } finally {
      connections.run(session -> update(session, "DROP TABLE " + table), 5);
    }
  }

  private static int update(Session session, String sql) throws SQLException {
    try (PreparedStatement ps = session.connection().prepareStatement(sql)) {
      int count = ps.executeUpdate();
      session.commitIfOwned();
      return count;
    }
  }
}

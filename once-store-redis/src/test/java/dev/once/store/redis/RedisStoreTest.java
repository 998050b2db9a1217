package dev.once.store.redis;

import static dev.once.tck.Samples.newFingerprint;
import static dev.once.tck.Samples.newId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the Redis store does beyond the contract kit: its key layout, retention, script cache and
 * waits.
 */
class RedisStoreTest {

  private static final Duration LONG = Duration.ofMinutes(30);

  private final String prefix = LocalRedis.uniquePrefix();
  private RedisStore store;
  private RedisCommands<byte[], byte[]> redis;

  @BeforeEach
  void openStore() {
    store = RedisStore.builder(LocalRedis.client()).keyPrefix(prefix).build();
    redis = LocalRedis.raw();
  }

  @AfterEach
  void closeStore() {
    store.close();
  }

  @Test
  void aRecordIsOneHashUnderThePrefixWithItsScopeAndKeyAsHashTag() {
    RecordId id = RecordId.of(Scope.of("tenant|a", "route{1}"), IdempotencyKey.of("key|%{}"));
    claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    byte[] key = ascii(prefix + "{tenant%7Ca/route%7B1%7D|key%7C%25%7B%7D}");
    assertThat(redis.type(key)).isEqualTo("hash");
    assertThat(redis.pttl(key)).isPositive();
  }

  @Test
  void aClaimRecordsItsCreationTimeInTheHashAndAStealKeepsIt() throws InterruptedException {
    RecordId id = newId();
    var fingerprint = newFingerprint();
    claimed(store.claim(new ClaimRequest(id, fingerprint, Duration.ofMillis(50), LONG)));
    byte[] created = redis.hget(recordKey(id), ascii("c"));
    assertThat(created).isNotNull();
    ClaimResult again = store.claim(new ClaimRequest(id, fingerprint, LONG, LONG));
    for (int i = 0; i < 500 && !(again instanceof Claimed); i++) {
      Thread.sleep(20); // until the 50 ms lease has ended by the server's clock
      again = store.claim(new ClaimRequest(id, fingerprint, LONG, LONG));
    }

    assertThat(claimed(again).stolen()).isTrue();
    assertThat(redis.hget(recordKey(id), ascii("c"))).isEqualTo(created);
  }

  @Test
  void aRecordWrittenBeforeCreationTimesWereKeptIsListedFirstWithNoCreationTime() {
    RecordId known = newId();
    claimed(store.claim(new ClaimRequest(known, newFingerprint(), LONG, LONG)));
    RecordId old = newId();
    claimed(store.claim(new ClaimRequest(old, newFingerprint(), LONG, LONG)));
    redis.hdel(recordKey(old), ascii("c")); // as a version without the field wrote it

    dev.once.store.InFlight found = store.inFlight(Duration.ofDays(1), 10);

    assertThat(found.records()).extracting(IdempotencyRecord::id).containsExactly(old);
    assertThat(found.records().get(0).createdAt()).isNull();
    assertThat(found.records().get(0).age()).isEmpty();
    assertThat(store.get(old).orElseThrow().createdAt()).isNull();
    assertThat(store.inFlight(Duration.ZERO, 10).records())
        .extracting(IdempotencyRecord::id)
        .containsExactly(old, known);
  }

  @Test
  void theInFlightListingReadsABoundedNumberOfKeysAndSaysWhenItStopped() {
    int records = RedisStore.IN_FLIGHT_SCAN_KEYS + 2_000;
    try (RedisStore many =
        RedisStore.builder(LocalRedis.client())
            .keyPrefix(LocalRedis.uniquePrefix())
            .retentionAfterExpiry(Duration.ZERO)
            .build()) {
      Duration oneMinute = Duration.ofMinutes(1);
      for (int from = 0; from < records; from += 1_000) {
        List<ClaimRequest> batch = new ArrayList<>();
        for (int i = from; i < Math.min(records, from + 1_000); i++) {
          batch.add(new ClaimRequest(newId(), newFingerprint(), oneMinute, oneMinute));
        }
        many.claimAll(batch);
      }

      dev.once.store.InFlight found = many.inFlight(Duration.ZERO, 5);

      assertThat(found.records()).hasSize(5);
      assertThat(found.complete()).isFalse();
    }
  }

  @Test
  void oneBatchAtOnceUnlessTheBuilderAsksForMore() {
    assertThat(store.batchesAtOnce()).isEqualTo(1);
    try (RedisStore four =
        RedisStore.builder(LocalRedis.client())
            .keyPrefix(LocalRedis.uniquePrefix())
            .batchesAtOnce(4)
            .build()) {
      assertThat(four.batchesAtOnce()).isEqualTo(4);
      assertThat(four.toString()).contains("batchesAtOnce=4");
    }
  }

  @Test
  void aRecordKeyDecodesBackToItsScopeAndKey() {
    KeyLayout layout = new KeyLayout(prefix);
    RecordId id =
        RecordId.of(Scope.of("tenant|a", "route{1}", "caf\u00e9%"), IdempotencyKey.of("key|%{}"));

    assertThat(layout.idOf(layout.recordKey(id))).isEqualTo(id);
    assertThat(layout.idOf(ascii(prefix + "{no-bar}"))).isNull();
    assertThat(layout.idOf(ascii(prefix + "{a|b|c}"))).isNull();
    assertThat(layout.idOf(ascii(prefix + "{a|b%7}"))).isNull();
  }

  @Test
  void aReleasedRecordLeavesATombstoneThatRedisDeletesAfterTheRetention() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(store.release(id, claimed.token())).isTrue();

    byte[] key = recordKey(id);
    assertThat(fields(key)).containsExactlyInAnyOrder("s", "t", "e");
    // +1: the expiry instant is rounded up to the next millisecond of the server clock.
    assertThat(redis.pttl(key))
        .isBetween(1L, RedisStore.DEFAULT_RETENTION_AFTER_EXPIRY.toMillis() + 1);
    assertThat(store.get(id)).isEmpty();
  }

  @Test
  void withoutRetentionRedisDeletesARecordTheMomentItIsReleasedOrExpires() {
    try (RedisStore noRetention =
        RedisStore.builder(LocalRedis.client())
            .keyPrefix(prefix)
            .retentionAfterExpiry(Duration.ZERO)
            .build()) {
      RecordId released = newId();
      Claimed claimed =
          claimed(noRetention.claim(new ClaimRequest(released, newFingerprint(), LONG, LONG)));
      RecordId completed = newId();
      Claimed other =
          claimed(noRetention.claim(new ClaimRequest(completed, newFingerprint(), LONG, LONG)));

      assertThat(noRetention.release(released, claimed.token())).isTrue();
      assertThat(
              noRetention.complete(completed, other.token(), ascii("done"), Duration.ofSeconds(5)))
          .isTrue();

      assertThat(redis.exists(recordKey(released))).isZero();
      assertThat(redis.pttl(recordKey(completed)))
          .isBetween(1L, 5_001L); // rounded up to the next ms
      assertThat(noRetention.purgeExpired(100)).isZero();
    }
  }

  @Test
  void aCompletedRecordStaysInRedisForItsTtlPlusTheRetention() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(store.complete(id, claimed.token(), ascii("done"), Duration.ofSeconds(60))).isTrue();

    long expected =
        Duration.ofSeconds(60).plus(RedisStore.DEFAULT_RETENTION_AFTER_EXPIRY).toMillis();
    assertThat(redis.pttl(recordKey(id))).isBetween(expected - 5_000, expected + 1);
  }

  @Test
  void aNewLeaseGetsALargerTokenThanTheKeysLastOneEvenIfThatIsAheadOfTheServerClock() {
    RecordId id = newId();
    Claimed first = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.release(id, first.token())).isTrue();
    // As if the server clock had stepped back an hour since that token was granted.
    long fromTheFuture = first.token() + TimeUnit.HOURS.toMicros(1);
    redis.hset(recordKey(id), ascii("t"), ascii(Long.toString(fromTheFuture)));

    Claimed next = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(next.token()).isEqualTo(fromTheFuture + 1);
  }

  @Test
  void tokensAreTheServerClockInMicroseconds() {
    long before = serverMicros();
    Claimed claimed = claimed(store.claim(new ClaimRequest(newId(), newFingerprint(), LONG, LONG)));
    long after = serverMicros();

    assertThat(claimed.token()).isBetween(before, after);
  }

  @Test
  void scriptsRunAgainAfterTheServerForgetsThem() {
    RecordId id = newId();
    redis.scriptFlush();

    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(store.complete(id, claimed.token(), ascii("done"), LONG)).isTrue();
    assertThat(store.get(id)).map(IdempotencyRecord::state).contains(RecordState.COMPLETED);
  }

  @Test
  void purgeTurnsExpiredRecordsIntoTombstonesThatKeepTheirToken() throws Exception {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.complete(id, claimed.token(), new byte[4096], Duration.ofMillis(50))).isTrue();
    Thread.sleep(100);

    assertThat(store.purgeExpired(1_000)).isPositive();

    assertThat(fields(recordKey(id))).containsExactlyInAnyOrder("s", "t", "e");
    assertThat(claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG))).token())
        .isGreaterThan(claimed.token());
  }

  @Test
  void aWaiterMayCallTheStoreSynchronouslyWhenWoken() throws Exception {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    CompletableFuture<Void> change = store.awaitChange(id);
    // Run on Lettuce's event loop, this would wait for the very thread it blocks.
    CompletableFuture<Optional<IdempotencyRecord>> reread =
        change.thenApply(ignored -> store.get(id));

    assertThat(store.complete(id, claimed.token(), ascii("done"), LONG)).isTrue();

    assertThat(reread.get(5, TimeUnit.SECONDS))
        .map(IdempotencyRecord::state)
        .contains(RecordState.COMPLETED);
  }

  @Test
  void onlyChangesSomeoneWaitsForArePublished() throws Exception {
    java.util.concurrent.BlockingQueue<String> published =
        new java.util.concurrent.LinkedBlockingQueue<>();
    try (var listener = LocalRedis.client().connectPubSub(io.lettuce.core.codec.StringCodec.UTF8)) {
      listener.addListener(
          new io.lettuce.core.pubsub.RedisPubSubAdapter<String, String>() {
            @Override
            public void message(String pattern, String channel, String message) {
              published.add(message);
            }
          });
      listener.sync().psubscribe(prefix + "*");
      RecordId unwatched = newId();
      Claimed a = claimed(store.claim(new ClaimRequest(unwatched, newFingerprint(), LONG, LONG)));
      assertThat(store.complete(unwatched, a.token(), ascii("done"), LONG)).isTrue();
      assertThat(published.poll(300, TimeUnit.MILLISECONDS))
          .as("a claim and completion nobody waits for")
          .isNull();

      RecordId watched = newId();
      Claimed b = claimed(store.claim(new ClaimRequest(watched, newFingerprint(), LONG, LONG)));
      CompletableFuture<Void> change = store.awaitChange(watched);
      assertThat(store.complete(watched, b.token(), ascii("done"), LONG)).isTrue();
      assertThat(published.poll(5, TimeUnit.SECONDS)).isEqualTo("finished");
      change.get(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void aCancelledWaitUnsubscribes() {
    RecordId id = newId();
    CompletableFuture<Void> change = store.awaitChange(id);
    assertThat(store.waiterCount()).isEqualTo(1);

    change.cancel(false);

    assertThat(store.waiterCount()).isZero();
  }

  @Test
  void closingTheStoreWakesItsWaitersAndLeavesTheClientUsable() throws Exception {
    RecordId id = newId();
    CompletableFuture<Void> change = store.awaitChange(id);

    store.close();

    change.get(5, TimeUnit.SECONDS);
    try (RedisStore another = RedisStore.builder(LocalRedis.client()).keyPrefix(prefix).build()) {
      assertThat(another.get(id)).isEmpty();
    }
  }

  private long serverMicros() {
    var time = redis.time();
    return Long.parseLong(new String(time.get(0), StandardCharsets.US_ASCII)) * 1_000_000L
        + Long.parseLong(new String(time.get(1), StandardCharsets.US_ASCII));
  }

  private java.util.List<String> fields(byte[] key) {
    return redis.hkeys(key).stream().map(f -> new String(f, StandardCharsets.US_ASCII)).toList();
  }

  /**
   * One claim of a batch fails on the server (its key holds a string: a record this version cannot
   * read) while the others are granted: the batch fails, and the leases it was granted are
   * released, blocking and asynchronously alike. (The contract kit cannot break one claim of a
   * pipelined batch: a broken connection loses replies, and a lease whose reply is lost is held by
   * nobody until it ends, as a single claim's would be.) A lease the batch stole is not released
   * but ended: the next claim steals it at once, with the recovery point its first holder saved.
   */
  @Test
  void aClaimBatchWithOneFailingClaimGivesBackTheClaimsTheOthersWereGranted()
      throws InterruptedException {
    Duration brief = Duration.ofMillis(50);
    for (boolean async : new boolean[] {false, true}) {
      RecordId broken = newId();
      redis.set(recordKey(broken), ascii("not a hash"));
      RecordId stale = newId();
      var fingerprint = newFingerprint();
      long first = claimed(store.claim(new ClaimRequest(stale, fingerprint, brief, LONG))).token();
      assertThat(store.checkpoint(stale, first, ascii("charged"), brief)).isTrue();
      Thread.sleep(2 * brief.toMillis()); // its holder is gone
      List<ClaimRequest> requests = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        requests.add(new ClaimRequest(newId(), newFingerprint(), LONG, LONG));
      }
      requests.add(3, new ClaimRequest(broken, newFingerprint(), LONG, LONG));
      // A long lease for the batch's steal: only its hand-over lets the next claim in at once.
      requests.add(0, new ClaimRequest(stale, fingerprint, LONG, LONG));

      assertThatThrownBy(
              () -> {
                if (async) {
                  store.claimAllAsync(requests, Runnable::run).toCompletableFuture().join();
                } else {
                  store.claimAll(requests);
                }
              })
          .satisfies(
              e ->
                  assertThat(e instanceof CompletionException ? e.getCause() : e)
                      .isInstanceOfSatisfying(
                          dev.once.store.UnreadableRecordException.class,
                          u -> assertThat(u.id()).isEqualTo(broken)));

      for (ClaimRequest request : requests.subList(1, requests.size())) {
        if (!request.id().equals(broken)) {
          assertThat(store.get(request.id()))
              .as("%s after the failed batch", request.id())
              .isEmpty();
          assertThat(claimed(store.claim(request)).stolen()).isFalse();
        }
      }
      assertThat(redis.get(recordKey(broken))).isEqualTo(ascii("not a hash"));
      assertThat(store.get(stale).orElseThrow().token())
          .as("the batch's steal")
          .isGreaterThan(first);
      ClaimResult again = store.claim(requests.get(0));
      assertThat(claimed(again).stolen()).isTrue();
      assertThat(claimed(again).recoveryPoint()).isEqualTo(ascii("charged"));
    }
  }

  /**
   * A batch on a standalone Redis is one script: its fresh records all get the token of the one
   * TIME the script reads (separate scripts would read the clock once each).
   */
  @Test
  void aBatchOfFreshClaimsIsOneScript() {
    List<ClaimRequest> requests = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      requests.add(new ClaimRequest(newId(), newFingerprint(), LONG, LONG));
    }

    List<ClaimResult> results = store.claimAll(requests);

    assertThat(results.stream().map(r -> claimed(r).token()).distinct()).hasSize(1);
  }

  /**
   * A finish batch in which one record's key holds something else fails, as a batch that may have
   * applied in part; the script goes on past the failing key, so the others are finished.
   */
  @Test
  void aFinishBatchWithOneFailingWriteFailsAndFinishesTheOthers() {
    List<dev.once.store.Finish> finishes = new ArrayList<>();
    List<RecordId> ids = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      RecordId id = newId();
      long token = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG))).token();
      ids.add(id);
      finishes.add(dev.once.store.Finish.complete(id, token, ascii("done"), LONG));
    }
    RecordId broken = newId();
    redis.set(recordKey(broken), ascii("not a hash"));
    finishes.add(2, dev.once.store.Finish.complete(broken, 1, ascii("done"), LONG));

    assertThatThrownBy(() -> store.finishAll(finishes))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining(broken.toString());

    for (RecordId id : ids) {
      assertThat(store.get(id))
          .get()
          .satisfies(r -> assertThat(r.state()).isEqualTo(RecordState.COMPLETED));
    }
    assertThat(redis.get(recordKey(broken))).isEqualTo(ascii("not a hash"));
  }

  /**
   * A record key holding a value of another type is a record this version cannot read, for a claim
   * and a read, blocking and asynchronous alike; never an outage, and never overwritten.
   */
  @Test
  void aKeyOfAnotherTypeIsAnUnreadableRecordAndIsLeftAsItIs() {
    RecordId id = newId();
    redis.set(recordKey(id), ascii("not a hash"));
    ClaimRequest request = new ClaimRequest(id, newFingerprint(), LONG, LONG);
    java.util.List<org.assertj.core.api.ThrowableAssert.ThrowingCallable> calls =
        java.util.List.of(
            () -> store.claim(request),
            () -> store.claimAsync(request, Runnable::run).toCompletableFuture().join(),
            () -> store.get(id),
            () -> store.getAsync(id, Runnable::run).toCompletableFuture().join());

    for (org.assertj.core.api.ThrowableAssert.ThrowingCallable call : calls) {
      assertThatThrownBy(call)
          .satisfies(
              e ->
                  assertThat(e instanceof CompletionException ? e.getCause() : e)
                      .isInstanceOfSatisfying(
                          dev.once.store.UnreadableRecordException.class,
                          u -> {
                            assertThat(u.id()).isEqualTo(id);
                            assertThat(u.reason())
                                .isEqualTo(
                                    dev.once.store.UnreadableRecordException.Reason.RECORD_FORMAT);
                          }));
    }
    assertThat(redis.get(recordKey(id))).isEqualTo(ascii("not a hash"));
  }

  /**
   * A write under a lease on a key that holds something else fails as an outage, blocking and
   * asynchronous alike, unlike a claim or a read of it: no lease can be held on such a key, so the
   * holder's outcome is unknown, not the record unreadable.
   */
  @Test
  void aWriteUnderALeaseOnAKeyOfAnotherTypeIsStoreUnavailable() {
    RecordId id = newId();
    redis.set(recordKey(id), ascii("not a hash"));
    List<org.assertj.core.api.ThrowableAssert.ThrowingCallable> calls =
        List.of(
            () -> store.heartbeat(id, 1, LONG),
            () -> store.checkpoint(id, 1, ascii("point"), LONG),
            () -> store.complete(id, 1, ascii("done"), LONG),
            () -> store.failFinal(id, 1, ascii("failed"), LONG),
            () -> store.release(id, 1),
            () -> store.endLease(id, 1),
            () ->
                store
                    .completeAsync(id, 1, ascii("done"), LONG, Runnable::run)
                    .toCompletableFuture()
                    .join(),
            () ->
                store
                    .failFinalAsync(id, 1, ascii("failed"), LONG, Runnable::run)
                    .toCompletableFuture()
                    .join(),
            () -> store.releaseAsync(id, 1, Runnable::run).toCompletableFuture().join(),
            () -> store.endLeaseAsync(id, 1, Runnable::run).toCompletableFuture().join());

    for (org.assertj.core.api.ThrowableAssert.ThrowingCallable call : calls) {
      assertThatThrownBy(call)
          .satisfies(
              e ->
                  assertThat(e instanceof CompletionException ? e.getCause() : e)
                      .isInstanceOf(StoreUnavailableException.class)
                      .hasMessageContaining("WRONGTYPE"));
    }
    assertThat(redis.get(recordKey(id))).isEqualTo(ascii("not a hash"));
  }

  private byte[] recordKey(RecordId id) {
    return new KeyLayout(prefix).recordKey(id);
  }

  private static Claimed claimed(ClaimResult result) {
    assertThat(result).isInstanceOf(Claimed.class);
    return (Claimed) result;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}

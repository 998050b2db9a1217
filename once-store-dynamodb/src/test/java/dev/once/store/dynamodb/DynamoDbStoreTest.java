package dev.once.store.dynamodb;

import static dev.once.tck.Samples.newFingerprint;
import static dev.once.tck.Samples.newId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Fingerprint;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.store.IdempotencyRecord;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.ResultTooLargeException;
import dev.once.store.StoreUnavailableException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;

/**
 * What the DynamoDB store does beyond the contract kit: round trips, item size, compression,
 * tombstones.
 */
class DynamoDbStoreTest {

  private static final Duration LONG = Duration.ofMinutes(30);
  private static final CountingRequests requests = new CountingRequests();

  private static final RecordingInFlight inFlight = new RecordingInFlight();

  private static String table;
  private static DynamoDbClient counting;
  private static DynamoDbClient recordingInFlight;

  @BeforeAll
  static void createTable() {
    table = LocalDynamoDb.newTable();
    counting =
        LocalDynamoDb.clientBuilder()
            .overrideConfiguration(c -> c.addExecutionInterceptor(requests))
            .build();
    recordingInFlight =
        LocalDynamoDb.clientBuilder()
            .overrideConfiguration(c -> c.addExecutionInterceptor(inFlight))
            .build();
  }

  @AfterAll
  static void closeClients() {
    if (counting != null) {
      counting.close();
    }
    if (recordingInFlight != null) {
      recordingInFlight.close();
    }
  }

  private final DynamoDbStore store = DynamoDbStore.builder(counting, table).build();

  @Test
  void anItemWrittenBeforeCreationTimesWereKeptIsListedFirstWithNoCreationTime() {
    String ownTable = LocalDynamoDb.newTable();
    DynamoDbStore own = DynamoDbStore.of(LocalDynamoDb.client(), ownTable);
    RecordId known = newId();
    claimed(own.claim(new ClaimRequest(known, newFingerprint(), LONG, LONG)));
    RecordId old = newId();
    claimed(own.claim(new ClaimRequest(old, newFingerprint(), LONG, LONG)));
    LocalDynamoDb.client()
        .updateItem(
            r ->
                r.tableName(ownTable)
                    .key(Items.key(old))
                    .updateExpression(
                        "REMOVE " + Items.CREATED_AT)); // as an older version wrote it

    dev.once.store.InFlight found = own.inFlight(Duration.ofDays(1), 10);

    assertThat(found.records()).extracting(IdempotencyRecord::id).containsExactly(old);
    assertThat(found.records().get(0).createdAt()).isNull();
    assertThat(found.complete()).isTrue();
    assertThat(own.get(old).orElseThrow().createdAt()).isNull();
    assertThat(own.get(known).orElseThrow().createdAt()).isNotNull();
    assertThat(own.inFlight(Duration.ZERO, 10).records())
        .extracting(IdempotencyRecord::id)
        .containsExactly(old, known);
  }

  @Test
  void anExtensionComputedOnAnEarlierClockNeverShortensTheLease() {
    // Two deployments share the table and one's clock runs 10 s behind (or one extension was
    // computed earlier and landed later): the lagging extension must not pull the lease back.
    dev.once.tck.FakeClock ahead = dev.once.tck.FakeClock.create();
    dev.once.tck.FakeClock behind =
        dev.once.tck.FakeClock.at(dev.once.tck.FakeClock.DEFAULT_START.minusSeconds(10));
    DynamoDbStore fast = DynamoDbStore.builder(counting, table).clock(ahead).build();
    DynamoDbStore slow = DynamoDbStore.builder(counting, table).clock(behind).build();
    RecordId id = newId();
    Duration lease = Duration.ofSeconds(30);
    Claimed claimed = claimed(fast.claim(new ClaimRequest(id, newFingerprint(), lease, LONG)));
    ahead.advance(Duration.ofSeconds(5));
    assertThat(fast.heartbeat(id, claimed.token(), lease)).isTrue();
    java.time.Instant promised = fast.get(id).orElseThrow().leaseUntil();

    assertThat(slow.heartbeat(id, claimed.token(), lease)).as("still held").isTrue();
    assertThat(slow.checkpoint(id, claimed.token(), utf8("step-2"), lease)).isTrue();

    IdempotencyRecord now = fast.get(id).orElseThrow();
    assertThat(now.leaseUntil()).isEqualTo(promised);
    assertThat(fast.claim(new ClaimRequest(id, now.fingerprint(), lease, LONG)))
        .isInstanceOf(Existing.class);
    ahead.advance(lease); // the promised lease has ended: a thief gets the kept recovery point
    Claimed stolen = claimed(fast.claim(new ClaimRequest(id, now.fingerprint(), lease, LONG)));
    assertThat(stolen.recoveryPoint()).isEqualTo(utf8("step-2"));
  }

  @Test
  void aClaimThatFindsALiveRecordCostsOneRequest() {
    RecordId id = newId();
    Fingerprint fingerprint = newFingerprint();
    Claimed first = claimed(store.claim(new ClaimRequest(id, fingerprint, LONG, LONG)));
    requests.reset();

    ClaimResult second = store.claim(new ClaimRequest(id, fingerprint, LONG, LONG));

    assertThat(second).isInstanceOf(Existing.class);
    assertThat(((Existing) second).record().token()).isEqualTo(first.token());
    assertThat(requests.sent())
        .as("requests, the existing record coming back with the failed condition")
        .isEqualTo(1);
  }

  @Test
  void aFreshClaimAndACompletionCostOneRequestEach() {
    RecordId id = newId();
    requests.reset();

    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.complete(id, claimed.token(), utf8("done"), LONG)).isTrue();

    assertThat(requests.sent()).isEqualTo(2);
  }

  @Test
  void aResultTooLargeForAnItemIsRefusedBeforeAnythingIsWrittenAndTheRecordStaysInProgress() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    byte[] incompressible = new byte[500 * 1024];
    ThreadLocalRandom.current().nextBytes(incompressible);
    requests.reset();

    assertThatThrownBy(() -> store.complete(id, claimed.token(), incompressible, LONG))
        .isInstanceOf(ResultTooLargeException.class)
        .hasMessageContaining("maxItemBytes");

    assertThat(requests.sent()).isZero();
    assertThat(store.get(id)).map(IdempotencyRecord::state).contains(RecordState.IN_PROGRESS);
    assertThat(store.complete(id, claimed.token(), utf8("a smaller result"), LONG)).isTrue();
  }

  @Test
  void aMegabyteOfJsonIsDeflatedToFitAnItemAndComesBackExactly() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; json.length() < 1 << 20; i++) {
      json.append("{\"id\":")
          .append(i)
          .append(",\"status\":\"settled\",\"amount\":\"")
          .append(i * 7 % 1000)
          .append(".00\"},");
    }
    byte[] result = json.append("{}]").toString().getBytes(StandardCharsets.UTF_8);

    assertThat(store.complete(id, claimed.token(), result, LONG)).isTrue();

    assertThat(store.get(id).orElseThrow().result()).isEqualTo(result);
    assertThat(rawItem(id).get(Items.RESULT).b().asByteArray().length)
        .isLessThan(DynamoDbStore.DYNAMODB_ITEM_LIMIT);
  }

  @Test
  void aReleasedRecordIsATombstoneThatKeepsOnlyItsTokenAndATtl() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.checkpoint(id, claimed.token(), utf8("step"), LONG)).isTrue();

    assertThat(store.release(id, claimed.token())).isTrue();

    Map<String, AttributeValue> item = rawItem(id);
    assertThat(item)
        .containsOnlyKeys(
            Items.SCOPE, Items.KEY, Items.STATE, Items.TOKEN, Items.EXPIRES_AT, Items.TTL);
    assertThat(item.get(Items.STATE).s()).isEqualTo(Items.RELEASED);
    assertThat(Long.parseLong(item.get(Items.TTL).n()))
        .isGreaterThan(
            System.currentTimeMillis() / 1000
                + DynamoDbStore.DEFAULT_RETENTION_AFTER_EXPIRY.toSeconds()
                - 60);
    assertThat(store.get(id)).isEmpty();
  }

  @Test
  void aNewLeaseGetsALargerTokenThanATombstonesEvenIfThatIsAheadOfTheClock() {
    RecordId id = newId();
    Claimed first = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.release(id, first.token())).isTrue();
    // As if the node that released it ran an hour ahead.
    long fromTheFuture = first.token() + Duration.ofHours(1).toNanos() / 1000 * 1024;
    counting.updateItem(
        r ->
            r.tableName(table)
                .key(Items.key(id))
                .updateExpression("SET #t = :t")
                .expressionAttributeNames(Map.of("#t", Items.TOKEN))
                .expressionAttributeValues(Map.of(":t", Items.n(fromTheFuture))));

    Claimed next = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(next.token()).isEqualTo(fromTheFuture + 1);
    assertThat(next.stolen()).isFalse();
  }

  @Test
  void withoutRetentionAReleaseDeletesTheItem() {
    DynamoDbStore noRetention =
        DynamoDbStore.builder(counting, table).retentionAfterExpiry(Duration.ZERO).build();
    RecordId id = newId();
    Claimed claimed =
        claimed(noRetention.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(noRetention.release(id, claimed.token())).isTrue();

    assertThat(rawItem(id)).isEmpty();
  }

  @Test
  void aBatchedHeartbeatSendsItsUpdatesAllAtOnceOnePerLease() {
    List<LeaseToken> held = claimMany(20);
    // Far beyond the gathering bound, so that a heartbeat sent one update at a time fails on the
    // count, not a timeout.
    DynamoDbStore gathered =
        DynamoDbStore.builder(recordingInFlight, table).callTimeout(Duration.ofSeconds(60)).build();
    inFlight.gather(held.size());

    Set<LeaseToken> extended = gathered.heartbeat(held, LONG);

    assertThat(extended).containsExactlyInAnyOrderElementsOf(held);
    assertThat(inFlight.sent()).as("requests").isEqualTo(held.size());
    assertThat(inFlight.most()).as("requests in flight at once").isEqualTo(held.size());
    gathered.close();
  }

  @Test
  void aBatchedHeartbeatHasAtMostHeartbeatConcurrencyUpdatesInFlight() {
    List<LeaseToken> held = claimMany(40);
    DynamoDbStore gathered =
        DynamoDbStore.builder(recordingInFlight, table)
            .callTimeout(Duration.ofSeconds(60))
            .batchConcurrency(4)
            .build();
    inFlight.gather(4);

    Set<LeaseToken> extended = gathered.heartbeat(held, LONG);

    assertThat(extended).containsExactlyInAnyOrderElementsOf(held);
    assertThat(inFlight.most()).as("requests in flight at once").isEqualTo(4);
    gathered.close();
  }

  @Test
  void aClaimBatchSendsItsClaimsAllAtOnceOnePerRecord() {
    Fingerprint fingerprint = newFingerprint();
    List<ClaimRequest> requests = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      requests.add(new ClaimRequest(newId(), fingerprint, LONG, LONG));
    }
    DynamoDbStore gathered =
        DynamoDbStore.builder(recordingInFlight, table).callTimeout(Duration.ofSeconds(60)).build();
    inFlight.gather(requests.size());

    List<ClaimResult> results = gathered.claimAll(requests);

    assertThat(inFlight.sent()).as("requests").isEqualTo(requests.size());
    assertThat(inFlight.most()).as("requests in flight at once").isEqualTo(requests.size());
    for (int i = 0; i < requests.size(); i++) {
      assertThat(store.get(requests.get(i).id()).orElseThrow().token())
          .as("the token of claim %d", i)
          .isEqualTo(claimed(results.get(i)).token());
    }
    gathered.close();
  }

  /**
   * One claim of a batch fails. The fresh claims of the others are released; the steal of a lease
   * whose holder saved a recovery point is not, but has its lease ended, so the next claim steals
   * the record at once with that recovery point, as it would have without the batch.
   */
  @Test
  void aClaimBatchThatFailsReleasesItsFreshClaimsAndHandsAStolenOneOver() {
    dev.once.tck.FakeClock clock = dev.once.tck.FakeClock.create();
    RecordId broken = newId();
    ExecutionInterceptor breaking =
        new ExecutionInterceptor() {
          @Override
          public void beforeExecution(
              Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof PutItemRequest put
                && put.item().get(Items.KEY).s().equals(broken.key().value())) {
              throw SdkClientException.create("the connection broke");
            }
          }
        };
    try (DynamoDbClient client =
            LocalDynamoDb.clientBuilder()
                .overrideConfiguration(c -> c.addExecutionInterceptor(breaking))
                .build();
        DynamoDbStore failing = DynamoDbStore.builder(client, table).clock(clock).build()) {
      Fingerprint fingerprint = newFingerprint();
      Duration lease = Duration.ofSeconds(30);
      RecordId stale = newId();
      long first =
          claimed(failing.claim(new ClaimRequest(stale, fingerprint, lease, LONG))).token();
      assertThat(failing.checkpoint(stale, first, utf8("charged"), lease)).isTrue();
      clock.advance(lease.plusSeconds(1));
      List<ClaimRequest> requests = new ArrayList<>();
      requests.add(new ClaimRequest(stale, fingerprint, lease, LONG));
      for (int i = 0; i < 8; i++) {
        requests.add(new ClaimRequest(newId(), fingerprint, lease, LONG));
      }
      requests.add(new ClaimRequest(broken, fingerprint, lease, LONG));

      assertThatThrownBy(() -> failing.claimAll(requests))
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("claimAll of 10 items");

      for (ClaimRequest fresh : requests.subList(1, requests.size())) {
        assertThat(failing.get(fresh.id())).as("%s, released", fresh.id()).isEmpty();
      }
      IdempotencyRecord held = failing.get(stale).orElseThrow();
      assertThat(held.state()).isEqualTo(RecordState.IN_PROGRESS);
      Claimed next = claimed(failing.claim(new ClaimRequest(stale, fingerprint, lease, LONG)));
      assertThat(next.stolen()).isTrue();
      assertThat(next.recoveryPoint()).isEqualTo(utf8("charged"));
    }
  }

  private List<LeaseToken> claimMany(int count) {
    Fingerprint fingerprint = newFingerprint();
    List<LeaseToken> held = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      RecordId id = newId();
      // A record that outlives the new lease: each heartbeat is then one update.
      held.add(
          new LeaseToken(
              id,
              claimed(store.claim(new ClaimRequest(id, fingerprint, LONG, Duration.ofDays(1))))
                  .token()));
    }
    return held;
  }

  private Map<String, AttributeValue> rawItem(RecordId id) {
    return counting.getItem(r -> r.tableName(table).key(Items.key(id)).consistentRead(true)).item();
  }

  private static Claimed claimed(ClaimResult result) {
    assertThat(result).isInstanceOf(Claimed.class);
    return (Claimed) result;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}

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
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.ResultTooLargeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** What the DynamoDB store does beyond the contract kit: round trips, item size, compression, tombstones. */
class DynamoDbStoreTest {

  private static final Duration LONG = Duration.ofMinutes(30);
  private static final AtomicInteger requests = new AtomicInteger();

  private static String table;
  private static DynamoDbClient counting;

  @BeforeAll
  static void createTable() {
    table = LocalDynamoDb.newTable();
    counting = LocalDynamoDb.clientBuilder()
        .overrideConfiguration(c -> c.addExecutionInterceptor(new ExecutionInterceptor() {
          @Override
          public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            requests.incrementAndGet();
          }
        }))
        .build();
  }

  @AfterAll
  static void closeClient() {
    if (counting != null) {
      counting.close();
    }
  }

  private final DynamoDbStore store = DynamoDbStore.builder(counting, table).build();

  @Test
  void aClaimThatFindsALiveRecordCostsOneRequest() {
    RecordId id = newId();
    Fingerprint fingerprint = newFingerprint();
    Claimed first = claimed(store.claim(new ClaimRequest(id, fingerprint, LONG, LONG)));
    requests.set(0);

    ClaimResult second = store.claim(new ClaimRequest(id, fingerprint, LONG, LONG));

    assertThat(second).isInstanceOf(Existing.class);
    assertThat(((Existing) second).record().token()).isEqualTo(first.token());
    assertThat(requests.get()).as("requests, the existing record coming back with the failed condition").isEqualTo(1);
  }

  @Test
  void aFreshClaimAndACompletionCostOneRequestEach() {
    RecordId id = newId();
    requests.set(0);

    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.complete(id, claimed.token(), utf8("done"), LONG)).isTrue();

    assertThat(requests.get()).isEqualTo(2);
  }

  @Test
  void aResultTooLargeForAnItemIsRefusedBeforeAnythingIsWrittenAndTheRecordStaysInProgress() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    byte[] incompressible = new byte[500 * 1024];
    ThreadLocalRandom.current().nextBytes(incompressible);
    requests.set(0);

    assertThatThrownBy(() -> store.complete(id, claimed.token(), incompressible, LONG))
        .isInstanceOf(ResultTooLargeException.class).hasMessageContaining("maxItemBytes");

    assertThat(requests.get()).isZero();
    assertThat(store.get(id)).map(IdempotencyRecord::state).contains(RecordState.IN_PROGRESS);
    assertThat(store.complete(id, claimed.token(), utf8("a smaller result"), LONG)).isTrue();
  }

  @Test
  void aMegabyteOfJsonIsDeflatedToFitAnItemAndComesBackExactly() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; json.length() < 1 << 20; i++) {
      json.append("{\"id\":").append(i).append(",\"status\":\"settled\",\"amount\":\"").append(i * 7 % 1000).append(".00\"},");
    }
    byte[] result = json.append("{}]").toString().getBytes(StandardCharsets.UTF_8);

    assertThat(store.complete(id, claimed.token(), result, LONG)).isTrue();

    assertThat(store.get(id).orElseThrow().result()).isEqualTo(result);
    assertThat(rawItem(id).get(Items.RESULT).b().asByteArray().length).isLessThan(DynamoDbStore.DYNAMODB_ITEM_LIMIT);
  }

  @Test
  void aReleasedRecordIsATombstoneThatKeepsOnlyItsTokenAndATtl() {
    RecordId id = newId();
    Claimed claimed = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.checkpoint(id, claimed.token(), utf8("step"), LONG)).isTrue();

    assertThat(store.release(id, claimed.token())).isTrue();

    Map<String, AttributeValue> item = rawItem(id);
    assertThat(item).containsOnlyKeys(Items.SCOPE, Items.KEY, Items.STATE, Items.TOKEN, Items.EXPIRES_AT, Items.TTL);
    assertThat(item.get(Items.STATE).s()).isEqualTo(Items.RELEASED);
    assertThat(Long.parseLong(item.get(Items.TTL).n()))
        .isGreaterThan(System.currentTimeMillis() / 1000 + DynamoDbStore.DEFAULT_RETENTION_AFTER_EXPIRY.toSeconds() - 60);
    assertThat(store.get(id)).isEmpty();
  }

  @Test
  void aNewLeaseGetsALargerTokenThanATombstonesEvenIfThatIsAheadOfTheClock() {
    RecordId id = newId();
    Claimed first = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));
    assertThat(store.release(id, first.token())).isTrue();
    // As if the node that released it ran an hour ahead.
    long fromTheFuture = first.token() + Duration.ofHours(1).toNanos() / 1000 * 1024;
    counting.updateItem(r -> r.tableName(table).key(Items.key(id))
        .updateExpression("SET #t = :t").expressionAttributeNames(Map.of("#t", Items.TOKEN))
        .expressionAttributeValues(Map.of(":t", Items.n(fromTheFuture))));

    Claimed next = claimed(store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(next.token()).isEqualTo(fromTheFuture + 1);
    assertThat(next.stolen()).isFalse();
  }

  @Test
  void withoutRetentionAReleaseDeletesTheItem() {
    DynamoDbStore noRetention = DynamoDbStore.builder(counting, table).retentionAfterExpiry(Duration.ZERO).build();
    RecordId id = newId();
    Claimed claimed = claimed(noRetention.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)));

    assertThat(noRetention.release(id, claimed.token())).isTrue();

    assertThat(rawItem(id)).isEmpty();
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

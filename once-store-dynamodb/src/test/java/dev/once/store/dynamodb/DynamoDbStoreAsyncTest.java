package dev.once.store.dynamodb;

import static dev.once.store.dynamodb.ThroughAsyncStore.await;
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
import dev.once.store.StoreUnavailableException;
import dev.once.tck.FaultProxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * What the store's asynchronous calls do with an async client beyond the contract kit: they go
 * through that client alone, never the blocking executor; they cost the requests the blocking calls
 * cost; they refuse oversized values before any request; and they end with {@link
 * StoreUnavailableException} within the call timeout when DynamoDB does not answer.
 */
class DynamoDbStoreAsyncTest {

  private static final Duration LONG = Duration.ofMinutes(30);
  private static final CountingRequests requests = new CountingRequests();

  private static String table;
  private static DynamoDbAsyncClient counting;
  private static DynamoDbClient unreachable;

  @BeforeAll
  static void createTable() {
    table = LocalDynamoDb.newTable();
    counting =
        LocalDynamoDb.asyncClientBuilder()
            .overrideConfiguration(c -> c.addExecutionInterceptor(requests))
            .build();
    // Nothing listens on port 1: a store whose sync client is this one answers only through its
    // async client.
    unreachable =
        LocalDynamoDb.clientBuilder(URI.create("http://127.0.0.1:1"))
            .overrideConfiguration(c -> c.apiCallTimeout(Duration.ofSeconds(2)))
            .build();
  }

  @AfterAll
  static void closeClients() {
    if (counting != null) {
      counting.close();
    }
    if (unreachable != null) {
      unreachable.close();
    }
  }

  private final AtomicInteger bridged = new AtomicInteger();
  private final Executor refusing =
      task -> {
        bridged.incrementAndGet();
        throw new AssertionError("an asynchronous call used the blocking executor");
      };

  @Test
  void theAsyncCallsGoThroughTheAsyncClientAloneAndNeverUseTheBlockingExecutor() {
    DynamoDbStore store =
        DynamoDbStore.builder(unreachable, table).asyncClient(LocalDynamoDb.asyncClient()).build();
    RecordId id = newId();
    Fingerprint fingerprint = newFingerprint();

    Claimed claimed =
        claimed(await(store.claimAsync(new ClaimRequest(id, fingerprint, LONG, LONG), refusing)));
    ClaimResult again =
        await(store.claimAsync(new ClaimRequest(id, fingerprint, LONG, LONG), refusing));
    boolean completed = await(store.completeAsync(id, claimed.token(), bytes(3), LONG, refusing));
    IdempotencyRecord record = await(store.getAsync(id, refusing)).orElseThrow();
    RecordId other = newId();
    Claimed second =
        claimed(
            await(store.claimAsync(new ClaimRequest(other, fingerprint, LONG, LONG), refusing)));
    boolean released = await(store.releaseAsync(other, second.token(), refusing));
    Claimed third =
        claimed(
            await(store.claimAsync(new ClaimRequest(other, fingerprint, LONG, LONG), refusing)));
    boolean failed = await(store.failFinalAsync(other, third.token(), bytes(4), LONG, refusing));

    assertThat(again).isInstanceOf(Existing.class);
    assertThat(completed).isTrue();
    assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(record.result()).isEqualTo(bytes(3));
    assertThat(released).isTrue();
    assertThat(third.token()).isGreaterThan(second.token());
    assertThat(failed).isTrue();
    assertThat(await(store.getAsync(other, refusing)))
        .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.FAILED_FINAL));
    assertThat(bridged).as("tasks given to the blocking executor").hasValue(0);
    assertThatThrownBy(() -> store.get(id))
        .as("the blocking calls use the sync client, which reaches nothing here")
        .isInstanceOf(StoreUnavailableException.class);
  }

  /**
   * A claim batch goes through the async client alone, its claims all sent before any answers: each
   * response is held back half a second, far longer than sending twenty requests takes.
   */
  @Test
  void anAsyncClaimBatchSendsItsClaimsAllAtOnceThroughTheAsyncClient() throws Exception {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    ExecutionInterceptor counting =
        new ExecutionInterceptor() {
          @Override
          public void beforeTransmission(
              Context.BeforeTransmission context, ExecutionAttributes attributes) {
            most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
          }

          @Override
          public void afterTransmission(
              Context.AfterTransmission context, ExecutionAttributes attributes) {
            inFlight.decrementAndGet();
          }
        };
    try (FaultProxy proxy = FaultProxy.to(LocalDynamoDb.port());
        DynamoDbAsyncClient delayed =
            LocalDynamoDb.asyncClientBuilder(URI.create("http://127.0.0.1:" + proxy.port()))
                .overrideConfiguration(c -> c.addExecutionInterceptor(counting))
                .build()) {
      DynamoDbStore store =
          DynamoDbStore.builder(unreachable, table)
              .asyncClient(delayed)
              .callTimeout(Duration.ofSeconds(30))
              .build();
      List<ClaimRequest> batch = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        batch.add(new ClaimRequest(newId(), newFingerprint(), LONG, LONG));
      }
      proxy.delayResponses(batch.size(), Duration.ofMillis(500));

      List<ClaimResult> results = await(store.claimAllAsync(batch, refusing));

      assertThat(results).hasSize(batch.size()).allMatch(Claimed.class::isInstance);
      assertThat(most).as("claims in flight at once").hasValue(batch.size());
      assertThat(bridged).as("tasks given to the blocking executor").hasValue(0);
    }
  }

  @Test
  void anAsyncCallFromAnInterruptedThreadIsSentAndTheInterruptIsStillSetWhenItReturns() {
    DynamoDbStore store =
        DynamoDbStore.builder(LocalDynamoDb.client(), table)
            .asyncClient(LocalDynamoDb.asyncClient())
            .build();
    RecordId id = newId();

    Thread.currentThread().interrupt();
    CompletableFuture<ClaimResult> claim;
    try {
      claim =
          store
              .claimAsync(new ClaimRequest(id, newFingerprint(), LONG, LONG), refusing)
              .toCompletableFuture();
    } finally {
      assertThat(Thread.interrupted()).as("the interrupt, still set").isTrue();
    }

    Claimed claimed = claimed(await(claim));
    assertThat(await(store.getAsync(id, refusing)))
        .hasValueSatisfying(r -> assertThat(r.token()).isEqualTo(claimed.token()));
  }

  @Test
  void withoutAnAsyncClientTheAsyncCallsRunTheBlockingOnesOnTheGivenExecutor() {
    DynamoDbStore store = DynamoDbStore.builder(LocalDynamoDb.client(), table).build();
    AtomicInteger ran = new AtomicInteger();
    Executor counted =
        task -> {
          ran.incrementAndGet();
          task.run();
        };
    RecordId id = newId();

    Claimed claimed =
        claimed(
            await(store.claimAsync(new ClaimRequest(id, newFingerprint(), LONG, LONG), counted)));
    assertThat(await(store.releaseAsync(id, claimed.token(), counted))).isTrue();

    assertThat(ran).hasValue(2);
  }

  @Test
  void anAsyncClaimThatFindsALiveRecordCostsOneRequestAndAFreshOneAndItsCompletionOneEach() {
    DynamoDbStore store =
        DynamoDbStore.builder(LocalDynamoDb.client(), table).asyncClient(counting).build();
    RecordId id = newId();
    Fingerprint fingerprint = newFingerprint();
    requests.reset();

    Claimed first =
        claimed(await(store.claimAsync(new ClaimRequest(id, fingerprint, LONG, LONG), refusing)));
    ClaimResult second =
        await(store.claimAsync(new ClaimRequest(id, fingerprint, LONG, LONG), refusing));
    assertThat(await(store.completeAsync(id, first.token(), bytes(1), LONG, refusing))).isTrue();

    assertThat(second).isInstanceOf(Existing.class);
    assertThat(((Existing) second).record().token()).isEqualTo(first.token());
    assertThat(requests.sent())
        .as("requests: put, put (its item back with the failure), update")
        .isEqualTo(3);
  }

  @Test
  void anAsyncCompletionTooLargeForAnItemFailsBeforeAnyRequestAndTheRecordStaysInProgress() {
    DynamoDbStore store =
        DynamoDbStore.builder(LocalDynamoDb.client(), table).asyncClient(counting).build();
    RecordId id = newId();
    Claimed claimed =
        claimed(
            await(store.claimAsync(new ClaimRequest(id, newFingerprint(), LONG, LONG), refusing)));
    byte[] incompressible = new byte[500 * 1024];
    ThreadLocalRandom.current().nextBytes(incompressible);
    requests.reset();

    CompletableFuture<Boolean> refused =
        store
            .completeAsync(id, claimed.token(), incompressible, LONG, refusing)
            .toCompletableFuture();

    assertThatThrownBy(() -> await(refused))
        .isInstanceOf(ResultTooLargeException.class)
        .hasMessageContaining("maxItemBytes");
    assertThat(requests.sent()).isZero();
    assertThat(await(store.getAsync(id, refusing)))
        .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.IN_PROGRESS));
  }

  @Test
  void withoutRetentionAnAsyncReleaseDeletesTheItem() {
    DynamoDbStore store =
        DynamoDbStore.builder(LocalDynamoDb.client(), table)
            .asyncClient(LocalDynamoDb.asyncClient())
            .retentionAfterExpiry(Duration.ZERO)
            .build();
    RecordId id = newId();
    Claimed claimed =
        claimed(
            await(store.claimAsync(new ClaimRequest(id, newFingerprint(), LONG, LONG), refusing)));

    assertThat(await(store.releaseAsync(id, claimed.token(), refusing))).isTrue();

    assertThat(
            LocalDynamoDb.client()
                .getItem(r -> r.tableName(table).key(Items.key(id)).consistentRead(true))
                .item())
        .isEmpty();
    assertThat(await(store.releaseAsync(id, claimed.token(), refusing)))
        .as("a second release finds nothing to release")
        .isFalse();
  }

  @Test
  void anAsyncCallThatDynamoDbAnswersTooLateFailsAsUnavailableWithinTheCallTimeout()
      throws Exception {
    try (FaultProxy proxy = FaultProxy.to(LocalDynamoDb.port());
        DynamoDbAsyncClient late =
            LocalDynamoDb.asyncClientBuilder(URI.create("http://127.0.0.1:" + proxy.port()))
                .build()) {
      DynamoDbStore store =
          DynamoDbStore.builder(LocalDynamoDb.client(), table)
              .asyncClient(late)
              .callTimeout(Duration.ofMillis(300))
              .build();
      RecordId id = newId();
      proxy.delayResponses(1_000, Duration.ofSeconds(20));

      CompletableFuture<ClaimResult> claim =
          store
              .claimAsync(new ClaimRequest(id, newFingerprint(), LONG, LONG), refusing)
              .toCompletableFuture();
      CompletableFuture<Optional<IdempotencyRecord>> get =
          store.getAsync(id, refusing).toCompletableFuture();

      // Far below the proxy's delay: only the call timeout can end these.
      for (CompletableFuture<?> answer : List.of(claim, get)) {
        assertThatThrownBy(() -> answer.get(10, TimeUnit.SECONDS))
            .isInstanceOf(ExecutionException.class)
            .cause()
            .isInstanceOf(StoreUnavailableException.class)
            .hasMessageContaining("call timeout 300 ms");
      }
      assertThat(bridged).hasValue(0);
    }
  }

  private static Claimed claimed(ClaimResult result) {
    assertThat(result).isInstanceOf(Claimed.class);
    return (Claimed) result;
  }

  private static byte[] bytes(int value) {
    return new byte[] {(byte) value, (byte) (value + 1)};
  }
}

package dev.once.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.FakeUnavailableStore;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

@SuppressWarnings("removal") // the deprecated decorator keeps working until it is removed
class ObservedStoreTest {

  /** Keeps every finished observation's operation, and whether it ended in an error. */
  static final class RecordingHandler implements ObservationHandler<Observation.Context> {
    final List<String> stopped = new CopyOnWriteArrayList<>();

    @Override
    public void onStop(Observation.Context context) {
      String operation = context.getLowCardinalityKeyValue("operation").getValue();
      stopped.add(
          context.getName() + ":" + operation + (context.getError() == null ? "" : ":error"));
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
      return true;
    }
  }

  private final RecordingHandler handler = new RecordingHandler();
  private final ObservationRegistry registry = ObservationRegistry.create();

  ObservedStoreTest() {
    registry.observationConfig().observationHandler(handler);
  }

  @Test
  void everyStoreCallOfAnExecutionIsObserved() {
    try (Once once = Once.of(ObservedStore.wrap(InMemoryStore.create(), registry))) {
      once.execute(
          Scope.of("m"),
          IdempotencyKey.of("k-1"),
          new Fingerprint(1, "00".repeat(32)),
          ResultCodec.utf8(),
          ctx -> "done");
    }

    assertThat(handler.stopped).containsExactly("once.store:claim", "once.store:complete");
  }

  @Test
  void theOperatorsInFlightListingIsObservedAsItsOwnOperation() {
    IdempotencyStore store = ObservedStore.wrap(InMemoryStore.create(), registry);

    assertThat(store.inFlight(Duration.ZERO, 10).complete()).isTrue();
    assertThatThrownBy(
            () ->
                ObservedStore.wrap(new FakeUnavailableStore(), registry)
                    .inFlight(Duration.ZERO, 10))
        .isInstanceOf(StoreUnavailableException.class);

    assertThat(handler.stopped).containsExactly("once.store:inFlight", "once.store:inFlight:error");
  }

  @Test
  void aFailedCallIsObservedAsAnError() {
    IdempotencyStore store = ObservedStore.wrap(new FakeUnavailableStore(), registry);
    ClaimRequest request =
        new ClaimRequest(
            RecordId.of(Scope.of("m"), IdempotencyKey.of("k")),
            new Fingerprint(1, "00".repeat(32)),
            Duration.ofSeconds(1),
            Duration.ofSeconds(2));

    assertThatThrownBy(() -> store.claim(request)).isInstanceOf(StoreUnavailableException.class);
    assertThat(handler.stopped).containsExactly("once.store:claim:error");
  }

  @Test
  void aBatchKeepsTheStoresBatchingAndIsObservedAsOneCall() {
    IdempotencyStore store = ObservedStore.wrap(batchingMemory(() -> true), registry);
    Fingerprint fingerprint = new Fingerprint(1, "00".repeat(32));
    List<ClaimRequest> requests = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      requests.add(
          new ClaimRequest(
              RecordId.of(Scope.of("m"), IdempotencyKey.of("k-" + i)),
              fingerprint,
              Duration.ofSeconds(10),
              Duration.ofSeconds(10)));
    }

    assertThat(store.batches()).isTrue();
    List<ClaimResult> claimed = store.claimAll(requests);
    List<Finish> releases = new ArrayList<>();
    for (int i = 0; i < claimed.size(); i++) {
      releases.add(
          Finish.release(requests.get(i).id(), ((ClaimResult.Claimed) claimed.get(i)).token()));
    }
    assertThat(store.finishAllAsync(releases, Runnable::run).toCompletableFuture().join())
        .containsExactly(true, true, true);

    assertThat(handler.stopped).containsExactly("once.store:claimBatch", "once.store:finishBatch");
  }

  @Test
  void whetherThisThreadsCallsMayBeGatheredIsTheStoresOwnAnswer() {
    AtomicBoolean mayGather = new AtomicBoolean();
    IdempotencyStore store = ObservedStore.wrap(batchingMemory(mayGather::get), registry);

    assertThat(store.batchesOnThisThread()).isFalse();
    mayGather.set(true);
    assertThat(store.batchesOnThisThread()).isTrue();
  }

  /** The in-memory store, made to say it batches, and whether this thread's calls may be. */
  private static IdempotencyStore batchingMemory(BooleanSupplier onThisThread) {
    IdempotencyStore memory = InMemoryStore.create();
    return new ForwardingStore() {
      @Override
      protected IdempotencyStore delegate() {
        return memory;
      }

      @Override
      public boolean batches() {
        return true;
      }

      @Override
      public boolean batchesOnThisThread() {
        return onThisThread.getAsBoolean();
      }
    };
  }

  @Test
  void theNoopRegistryLeavesTheStoreAsItIs() {
    IdempotencyStore store = InMemoryStore.create();

    assertThat(ObservedStore.wrap(store, ObservationRegistry.NOOP)).isSameAs(store);
  }

  @Test
  void asynchronousCallsReachTheStoresOwnAsynchronousMethods() throws Exception {
    java.util.List<String> asyncCalls = new CopyOnWriteArrayList<>();
    InMemoryStore memory = InMemoryStore.create();
    IdempotencyStore nativeAsync =
        new dev.once.store.ForwardingStore() {
          @Override
          protected IdempotencyStore delegate() {
            return memory;
          }

          @Override
          public java.util.concurrent.CompletionStage<dev.once.store.ClaimResult> claimAsync(
              ClaimRequest request, java.util.concurrent.Executor blocking) {
            asyncCalls.add("claim");
            return java.util.concurrent.CompletableFuture.completedFuture(claim(request));
          }

          @Override
          public java.util.concurrent.CompletionStage<java.util.Set<dev.once.store.LeaseToken>>
              heartbeatAsync(
                  java.util.Collection<dev.once.store.LeaseToken> leases,
                  Duration lease,
                  java.util.concurrent.Executor blocking) {
            asyncCalls.add("heartbeat");
            return java.util.concurrent.CompletableFuture.completedFuture(heartbeat(leases, lease));
          }
        };
    IdempotencyStore observed = ObservedStore.wrap(nativeAsync, registry);
    RecordId id = RecordId.of(Scope.of("m"), IdempotencyKey.of("async-1"));
    java.util.concurrent.Executor noThread =
        command -> {
          throw new AssertionError("the blocking fallback ran");
        };

    dev.once.store.ClaimResult claimed =
        observed
            .claimAsync(
                new ClaimRequest(
                    id,
                    new Fingerprint(1, "00".repeat(32)),
                    Duration.ofSeconds(5),
                    Duration.ofSeconds(10)),
                noThread)
            .toCompletableFuture()
            .get(5, java.util.concurrent.TimeUnit.SECONDS);
    long token = ((dev.once.store.ClaimResult.Claimed) claimed).token();
    observed
        .heartbeatAsync(
            java.util.List.of(new dev.once.store.LeaseToken(id, token)),
            Duration.ofSeconds(5),
            noThread)
        .toCompletableFuture()
        .get(5, java.util.concurrent.TimeUnit.SECONDS);

    assertThat(asyncCalls).containsExactly("claim", "heartbeat");
    assertThat(handler.stopped).containsExactly("once.store:claim", "once.store:heartbeatBatch");
  }
}

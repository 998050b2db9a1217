package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.MovingClock;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Claims of many keys at once ({@link Once#beginAll}) and the gathering of concurrent calls. */
@Timeout(60)
class OnceBatchTest {

  private static final Scope SCOPE = Scope.of("merchant-1", "orders");
  private static final Fingerprint FP = new Fingerprint(1, "aa".repeat(32));
  private static final Fingerprint OTHER_FP = new Fingerprint(1, "bb".repeat(32));
  private static final ExecutionPolicy REJECT = ExecutionPolicy.DEFAULTS;

  private final InMemoryStore memory = InMemoryStore.create();
  private final ExecutorService callers = Executors.newFixedThreadPool(16);

  @AfterEach
  void stop() {
    callers.shutdownNow();
  }

  /** The in-memory store, made to say it batches, each single claim taking a few milliseconds. */
  static class SlowBatchingStore extends ForwardingStore {
    final IdempotencyStore delegate;
    final List<Integer> claimBatches = Collections.synchronizedList(new ArrayList<>());
    final List<Integer> finishBatches = Collections.synchronizedList(new ArrayList<>());

    SlowBatchingStore(IdempotencyStore delegate) {
      this.delegate = delegate;
    }

    @Override
    protected IdempotencyStore delegate() {
      return delegate;
    }

    @Override
    public boolean batches() {
      return true;
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
      pause();
      return super.claim(request);
    }

    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
      claimBatches.add(requests.size());
      pause();
      return delegate.claimAll(requests);
    }

    @Override
    public List<Boolean> finishAll(List<Finish> finishes) {
      finishBatches.add(finishes.size());
      pause();
      return delegate.finishAll(finishes);
    }

    private static void pause() {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * {@code delegate}, whose {@code claimAll} answers what {@code answer} makes of the delegate's.
   */
  private static IdempotencyStore claimingAll(
      IdempotencyStore delegate, UnaryOperator<List<ClaimResult>> answer) {
    return new ForwardingStore() {
      @Override
      protected IdempotencyStore delegate() {
        return delegate;
      }

      @Override
      public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
        return answer.apply(delegate.claimAll(requests));
      }
    };
  }

  private static List<Claim> claims(String prefix, int n) {
    List<Claim> claims = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      claims.add(new Claim(SCOPE, IdempotencyKey.of(prefix + i), FP));
    }
    return claims;
  }

  @Test
  void eachAdmissionIsWhatBeginWouldAnswerInTheClaimsOrder() {
    try (Once once = Once.of(memory)) {
      List<Admission> first = once.beginAll(claims("k", 5), REJECT);
      assertThat(first).allMatch(a -> a instanceof Admission.Proceed);
      for (int i = 0; i < 4; i++) {
        ((Admission.Proceed) first.get(i))
            .lease()
            .complete(("r" + i).getBytes(StandardCharsets.UTF_8));
      }
      // k4 stays in flight
      List<Claim> again = new ArrayList<>(claims("k", 5));
      again.set(2, new Claim(SCOPE, IdempotencyKey.of("k2"), OTHER_FP));
      again.add(new Claim(SCOPE, IdempotencyKey.of("new"), FP));

      List<Admission> second = once.beginAll(again, REJECT);

      assertThat(second.get(0)).isInstanceOf(Admission.Replay.class);
      assertThat(((Admission.Replay) second.get(1)).value())
          .isEqualTo("r1".getBytes(StandardCharsets.UTF_8));
      assertThat(second.get(2)).isInstanceOf(Admission.FingerprintMismatch.class);
      assertThat(second.get(3)).isInstanceOf(Admission.Replay.class);
      assertThat(second.get(4)).isInstanceOf(Admission.InFlight.class);
      assertThat(second.get(5)).isInstanceOf(Admission.Proceed.class);
      ((Admission.Proceed) second.get(5)).lease().release();
      ((Admission.Proceed) first.get(4)).lease().release();
    }
  }

  @Test
  void aStoreThatAsksForNoBatchesAtOnceIsRefused() {
    SlowBatchingStore none =
        new SlowBatchingStore(memory) {
          @Override
          public int batchesAtOnce() {
            return 0;
          }
        };

    assertThatThrownBy(() -> Once.of(none))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("batchesAtOnce");
  }

  @Test
  void twoClaimsOnOneRecordAreRefusedAndNothingIsClaimed() {
    try (Once once = Once.of(memory)) {
      List<Claim> twice =
          List.of(claims("d", 1).get(0), claims("e", 1).get(0), claims("d", 1).get(0));

      assertThatThrownBy(() -> once.beginAll(twice, REJECT))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("d0");
      assertThat(memory.get(RecordId.of(SCOPE, IdempotencyKey.of("d0")))).isEmpty();
      assertThat(memory.get(RecordId.of(SCOPE, IdempotencyKey.of("e0")))).isEmpty();
    }
  }

  @Test
  void aClosedEngineClaimsNothing() {
    Once once = Once.of(memory);
    once.close();

    assertThatThrownBy(() -> once.beginAll(claims("c", 3), REJECT))
        .isInstanceOf(IllegalStateException.class);
    assertThat(memory.get(RecordId.of(SCOPE, IdempotencyKey.of("c0")))).isEmpty();
  }

  @Test
  void aStoreThatIsDownAnswersEveryClaimUnavailable() {
    FakeUnavailableStore down = new FakeUnavailableStore();
    try (Once once = Once.of(down)) {
      List<Admission> admissions = once.beginAll(claims("u", 3), REJECT);

      assertThat(admissions).hasSize(3).allMatch(a -> a instanceof Admission.StoreUnavailable);
      assertThat(down.calls).hasValue(1); // the first claim failed; the rest were not sent
    }
  }

  @Test
  void aStoreThatAnswersTooFewClaimsLeavesNoneOfThemHeld() {
    // A broken store: one answer short.
    IdempotencyStore shortchanging = claimingAll(memory, all -> all.subList(0, all.size() - 1));
    try (Once once = Once.of(shortchanging)) {
      assertThatThrownBy(() -> once.beginAll(claims("s", 3), REJECT))
          .isInstanceOf(IndexOutOfBoundsException.class);
    }
    // Nothing was handed out, so the two answered leases were released, not left to heartbeats
    // (the third, whose answer the store dropped, is a lost answer: stolen when its lease ends).
    for (int i = 0; i < 2; i++) {
      assertThat(memory.get(RecordId.of(SCOPE, IdempotencyKey.of("s" + i)))).isEmpty();
    }
  }

  /**
   * As above, with a lease among the answered ones that the batch stole from a holder who had saved
   * a recovery point: it is handed over, not released (its lease ended, the record kept), so the
   * record and its recovery point reach the next claim at once, as they would have without the
   * batch.
   */
  @Test
  void aBatchThatFailsHandsAStolenLeaseOver() {
    MovingClock clock = new MovingClock();
    InMemoryStore timed = InMemoryStore.builder().clock(clock).build();
    IdempotencyStore shortchanging = claimingAll(timed, all -> all.subList(0, all.size() - 1));
    List<Claim> batch = claims("t", 3);
    RecordId stale = RecordId.of(SCOPE, batch.get(0).key());
    RecordId fresh = RecordId.of(SCOPE, batch.get(1).key());
    try (Once once = Once.of(shortchanging)) {
      Lease gone = ((Admission.Proceed) once.begin(SCOPE, batch.get(0).key(), FP, REJECT)).lease();
      gone.checkpoint("charged".getBytes(StandardCharsets.UTF_8));
      gone.abandon();
      clock.advance(REJECT.lease().plusSeconds(1));

      assertThatThrownBy(() -> once.beginAll(batch, REJECT))
          .isInstanceOf(IndexOutOfBoundsException.class);

      assertThat(timed.get(fresh)).as("the fresh lease, released").isEmpty();
      IdempotencyRecord held = timed.get(stale).orElseThrow();
      assertThat(held.state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(held.token()).as("the batch's steal stands").isGreaterThan(gone.token());
      Admission next = once.begin(SCOPE, batch.get(0).key(), FP, REJECT);
      Lease resumed = ((Admission.Proceed) next).lease();
      assertThat(resumed.stolen()).isTrue();
      assertThat(resumed.recoveryPoint()).hasValue("charged".getBytes(StandardCharsets.UTF_8));
      resumed.release();
    }
  }

  /**
   * The engine closes while the store claims a batch: no claim of it is answered, so each is given
   * back. A steal among them, whose first holder saved a recovery point, is handed over (its lease
   * ended, the record kept), not left in flight for the length of a lease nobody runs under.
   */
  @Test
  void aBatchTheEngineClosedUnderGivesBackEveryClaimAndHandsAStolenOneOver() {
    MovingClock clock = new MovingClock();
    InMemoryStore timed = InMemoryStore.builder().clock(clock).build();
    Once[] engine = new Once[1];
    IdempotencyStore closing =
        claimingAll(
            timed,
            all -> {
              engine[0].close(); // while the answers travel back
              return all;
            });
    List<Claim> batch = claims("z", 3);
    RecordId stale = RecordId.of(SCOPE, batch.get(1).key());
    try (Once before = Once.of(timed)) {
      Lease gone =
          ((Admission.Proceed) before.begin(SCOPE, batch.get(1).key(), FP, REJECT)).lease();
      gone.checkpoint("charged".getBytes(StandardCharsets.UTF_8));
      gone.abandon();
    }
    clock.advance(REJECT.lease().plusSeconds(1));
    engine[0] = Once.of(closing);

    assertThatThrownBy(() -> engine[0].beginAll(batch, REJECT))
        .isInstanceOf(IllegalStateException.class);

    for (int i : new int[] {0, 2}) {
      assertThat(timed.get(RecordId.of(SCOPE, batch.get(i).key()))).as("fresh, released").isEmpty();
    }
    ClaimResult next = timed.claim(new ClaimRequest(stale, FP, REJECT.lease(), REJECT.ttl()));
    assertThat(next)
        .as("the batch's steal, handed over at once")
        .isInstanceOfSatisfying(
            ClaimResult.Claimed.class,
            c -> {
              assertThat(c.stolen()).isTrue();
              assertThat(c.recoveryPoint()).isEqualTo("charged".getBytes(StandardCharsets.UTF_8));
            });
  }

  @Test
  void anEmptyBatchClaimsNothing() {
    FakeUnavailableStore down = new FakeUnavailableStore();
    try (Once once = Once.of(down)) {
      assertThat(once.beginAll(List.of(), REJECT)).isEmpty();
      assertThat(down.calls).hasValue(0);
    }
  }

  @Test
  void concurrentCallersShareClaimAndFinishRoundTripsAndEachRunsOnce() throws Exception {
    SlowBatchingStore store = new SlowBatchingStore(memory);
    AtomicInteger runs = new AtomicInteger();
    int keys = 400;
    try (Once once = Once.of(store)) {
      List<Future<String>> results = new ArrayList<>();
      for (int i = 0; i < keys; i++) {
        IdempotencyKey key = IdempotencyKey.of("g" + i);
        String expected = "v" + i;
        results.add(
            callers.submit(
                () ->
                    i(key) % 2 == 0
                        ? value(
                            once.execute(
                                SCOPE, key, FP, ResultCodec.utf8(), ctx -> run(runs, expected)))
                        : value(
                            once.executeAsync(
                                    SCOPE,
                                    key,
                                    FP,
                                    ResultCodec.utf8(),
                                    OutcomeClassifier.defaults(),
                                    once.defaults(),
                                    ctx -> CompletableFuture.completedFuture(run(runs, expected)))
                                .toCompletableFuture()
                                .get(30, TimeUnit.SECONDS))));
      }
      for (int i = 0; i < keys; i++) {
        assertThat(results.get(i).get(30, TimeUnit.SECONDS)).isEqualTo("v" + i);
      }
      assertThat(runs).hasValue(keys);
      for (int i = 0; i < keys; i++) {
        assertThat(memory.get(RecordId.of(SCOPE, IdempotencyKey.of("g" + i))).orElseThrow().state())
            .isEqualTo(RecordState.COMPLETED);
      }
      // With 16 callers and a slow store, claims and finishes went in shared round trips.
      assertThat(store.claimBatches).isNotEmpty().anyMatch(n -> n > 1);
      assertThat(store.finishBatches).isNotEmpty().anyMatch(n -> n > 1);
      // Every retry replays without running.
      String replayed =
          value(
              once.execute(SCOPE, IdempotencyKey.of("g7"), FP, ResultCodec.utf8(), ctx -> "again"));
      assertThat(replayed).isEqualTo("v7");
      assertThat(runs).hasValue(keys);
    }
  }

  /**
   * A store that batches, except for the calls of threads it marks (as the Spring starter's store
   * does inside the caller's transaction): those threads' claims and finishes must be made on the
   * thread itself, one at a time, never carried in a batch that another thread runs; everyone
   * else's are still gathered.
   */
  @Test
  void aCallTheStoreKeepsToItsThreadIsNeverGatheredAndTheOthersStillAre() throws Exception {
    ThreadLocal<Boolean> pinned = ThreadLocal.withInitial(() -> false);
    Set<String> batched = ConcurrentHashMap.newKeySet();
    Set<String> pinnedAlone = ConcurrentHashMap.newKeySet();
    SlowBatchingStore store =
        new SlowBatchingStore(memory) {
          @Override
          public boolean batchesOnThisThread() {
            return !pinned.get();
          }

          @Override
          public ClaimResult claim(ClaimRequest request) {
            if (pinned.get()) {
              pinnedAlone.add(request.id().key().value());
            }
            return super.claim(request);
          }

          @Override
          public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
            requests.forEach(r -> batched.add(r.id().key().value()));
            return super.claimAll(requests);
          }

          @Override
          public List<Boolean> finishAll(List<Finish> finishes) {
            finishes.forEach(f -> batched.add(f.id().key().value()));
            return super.finishAll(finishes);
          }
        };
    AtomicInteger runs = new AtomicInteger();
    int keys = 200;
    // A listener, so that the engine's own timing decorator stands between it and the store and
    // must pass the answer on.
    try (Once once = Once.builder(store).listener(event -> {}).build()) {
      List<Future<String>> results = new ArrayList<>();
      for (int i = 0; i < keys; i++) {
        IdempotencyKey key = IdempotencyKey.of((i % 4 == 0 ? "p" : "g") + i);
        String expected = "v" + i;
        results.add(
            callers.submit(
                () -> {
                  pinned.set(key.value().startsWith("p"));
                  try {
                    return value(
                        once.execute(
                            SCOPE, key, FP, ResultCodec.utf8(), ctx -> run(runs, expected)));
                  } finally {
                    pinned.remove();
                  }
                }));
      }
      for (int i = 0; i < keys; i++) {
        assertThat(results.get(i).get(30, TimeUnit.SECONDS)).isEqualTo("v" + i);
      }
    }
    assertThat(runs).hasValue(keys);
    assertThat(batched).noneMatch(k -> k.startsWith("p")).anyMatch(k -> k.startsWith("g"));
    assertThat(pinnedAlone).hasSize(keys / 4);
    assertThat(store.claimBatches).anyMatch(n -> n > 1);
  }

  private static String value(ExecutionResult<String> result) {
    if (result instanceof ExecutionResult.Executed<String> e) {
      return e.value();
    }
    if (result instanceof ExecutionResult.Replayed<String> r) {
      return r.value();
    }
    throw new AssertionError("neither executed nor replayed: " + result);
  }

  private static int i(IdempotencyKey key) {
    return Integer.parseInt(key.value().substring(1));
  }

  private static String run(AtomicInteger runs, String value) {
    runs.incrementAndGet();
    return value;
  }
}

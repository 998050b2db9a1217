package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The smart batching under the engine's claims and finishes, against a scripted store. */
@Timeout(30)
class BatcherTest {

  private final ExecutorService callers = Executors.newFixedThreadPool(8);

  @AfterEach
  void stop() {
    callers.shutdownNow();
  }

  /** Answers n with n * 10; records every call; can be held at the gate and made to fail. */
  static final class Doubling implements Batcher.Calls<Integer, Integer> {
    final List<List<Integer>> batches = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger singles = new AtomicInteger();
    final AtomicInteger blockingSingles = new AtomicInteger();
    final Set<String> batchThreads = ConcurrentHashMap.newKeySet();
    volatile CountDownLatch gate = new CountDownLatch(0);

    /** Holds batch calls in place of {@code gate}, where set. */
    volatile @Nullable CountDownLatch batchGate;

    volatile RuntimeException failure;
    volatile int poison = -1;

    /** Whether calls for one record that are equal modulo 2000 may ride along with each other. */
    volatile boolean riders;

    /** Whether every answer may be shared with riders (a read), or none (a grant). */
    volatile boolean shares;

    /** n and n + 1000 (and n + 2000 …) are calls for the same record. */
    @Override
    public RecordId record(Integer request) {
      return RecordId.of(Scope.GLOBAL, IdempotencyKey.of("k" + request % 1000));
    }

    @Override
    public Integer one(Integer request) {
      blockingSingles.incrementAndGet();
      return single(request);
    }

    private Integer single(Integer request) {
      singles.incrementAndGet();
      await();
      if (request == poison) {
        throw new IllegalArgumentException("poison " + request);
      }
      if (failure != null) {
        throw failure;
      }
      return request * 10;
    }

    @Override
    public CompletionStage<Integer> oneAsync(Integer request) {
      return CompletableFuture.supplyAsync(() -> single(request));
    }

    @Override
    public List<Integer> all(List<Integer> requests) {
      batches.add(List.copyOf(requests));
      batchThreads.add(Thread.currentThread().getName());
      CountDownLatch ownGate = batchGate;
      if (ownGate != null) {
        await(ownGate);
      } else {
        await();
      }
      if (failure != null) {
        throw failure;
      }
      if (requests.contains(poison)) {
        throw new IllegalArgumentException("poison in batch");
      }
      List<Integer> answers = new ArrayList<>();
      for (int r : requests) {
        answers.add(r * 10);
      }
      return answers;
    }

    @Override
    public CompletionStage<List<Integer>> allAsync(List<Integer> requests) {
      return CompletableFuture.supplyAsync(() -> all(requests));
    }

    @Override
    public boolean mayShare(Integer carrier, Integer other) {
      return riders && carrier % 2000 == other % 2000;
    }

    @Override
    public boolean shareable(Integer answer) {
      return shares;
    }

    private void await() {
      await(gate);
    }

    private static void await(CountDownLatch latch) {
      try {
        latch.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Test
  void aCallToAnIdleStoreGoesAloneAndAtOnce() {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);

    assertThat(batcher.call(4)).isEqualTo(40);
    assertThat(batcher.callAsync(5).toCompletableFuture().join()).isEqualTo(50);
    assertThat(store.singles).hasValue(2);
    assertThat(store.batches).isEmpty();
  }

  /**
   * Concurrent duplicates of one key never share a batch: one multi-row claim would grant every
   * copy the same lease. The later copy waits for the next batch, the order of the queue kept.
   */
  @Test
  void aBatchHoldsOneCallPerRecordAndTheRestGoInLaterBatchesInOrder() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);

    assertThat(behindOneUnderWay(store, batcher, 2, 1002, 3, 2002, 1003, 4))
        .containsExactly(20, 10020, 30, 20020, 10030, 40);
    // The last, alone, is a single call.
    assertThat(store.batches).containsExactly(List.of(2, 3, 4), List.of(1002, 1003));
    assertThat(store.singles).hasValue(2);
  }

  /**
   * A duplicate that would read the same rides along with the first and shares an answer that
   * changed nothing: a herd replaying one key costs one read a batch. One that would read
   * otherwise, and every later call for that record, stays queued in order.
   */
  @Test
  void aDuplicateThatReadsTheSameSharesAnAnswerThatChangedNothing() throws Exception {
    Doubling store = new Doubling();
    store.riders = true;
    store.shares = true;
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);

    assertThat(behindOneUnderWay(store, batcher, 7, 2007, 8, 1007, 4007))
        .containsExactly(70, 70, 80, 10070, 40070);
    // 2007 rode with 7; 4007 came after 1007, which may not share, so it kept its place behind
    // it: each then went alone.
    assertThat(store.batches).containsExactly(List.of(7, 8));
    assertThat(store.singles).hasValue(3);
  }

  /** A rider whose carrier was granted something goes back to the head of the queue. */
  @Test
  void aRiderGoesBackWhenTheAnswerGrantedSomething() throws Exception {
    Doubling store = new Doubling();
    store.riders = true;
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);

    assertThat(behindOneUnderWay(store, batcher, 7, 2007, 8, 9)).containsExactly(70, 20070, 80, 90);
    assertThat(store.batches).containsExactly(List.of(7, 8, 9));
    assertThat(store.singles).hasValue(2);
  }

  /** Even when every queued call is for one record, each goes (alone) and none is stranded. */
  @Test
  void aHerdOfOneRecordIsAnsweredOneCallAfterAnother() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 2);
    store.gate = new CountDownLatch(1);
    List<Future<Integer>> herd = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      int n = 7 + 1000 * i;
      herd.add(callers.submit(() -> batcher.call(n)));
    }
    awaitQueued(batcher, 7);
    store.gate.countDown();

    for (int i = 0; i < herd.size(); i++) {
      assertThat(herd.get(i).get(10, TimeUnit.SECONDS)).isEqualTo((7 + 1000 * i) * 10);
    }
    assertThat(store.batches).isEmpty();
    assertThat(store.singles).hasValue(8);
  }

  /**
   * One batch at a time even below the most in flight: side by side, batches would be smaller and
   * every record would pay more of a batch's own cost.
   */
  @Test
  void callsMadeWhileOneIsUnderWayGoTogetherAndEachGetsItsOwnAnswer() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 4);
    Future<Integer> first = underWay(store, () -> callers.submit(() -> batcher.call(1)));
    List<Future<Integer>> blocking = new ArrayList<>();
    for (int i = 2; i <= 5; i++) {
      int n = i;
      blocking.add(callers.submit(() -> batcher.call(n)));
    }
    List<CompletableFuture<Integer>> async = new ArrayList<>();
    for (int i = 6; i <= 8; i++) {
      async.add(batcher.callAsync(i).toCompletableFuture());
    }
    awaitQueued(batcher, 7);
    store.gate.countDown();

    assertThat(first.get()).isEqualTo(10);
    for (int i = 0; i < blocking.size(); i++) {
      assertThat(blocking.get(i).get()).isEqualTo((i + 2) * 10);
    }
    for (int i = 0; i < async.size(); i++) {
      assertThat(async.get(i).get()).isEqualTo((i + 6) * 10);
    }
    assertThat(store.batches).hasSize(1);
    assertThat(store.batches.get(0)).containsExactlyInAnyOrder(2, 3, 4, 5, 6, 7, 8);
    // A blocking caller in the batch led it, on its own thread: no pool thread was needed.
    assertThat(store.batchThreads).allMatch(t -> t.startsWith("pool-"));
  }

  /**
   * A store that asks for more batches at once (Redis) has calls go at once while fewer are under
   * way; only then do calls wait and go together, and a batch that returns takes the next at once.
   */
  @Test
  void callsGoAtOnceWhileFewerThanTheStoreAsksForAreUnderWay() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 2, 4);
    store.gate = new CountDownLatch(1);
    Future<Integer> first = callers.submit(() -> batcher.call(1));
    Future<Integer> second = callers.submit(() -> batcher.call(2));
    awaitSingles(store, 2);
    List<CompletableFuture<Integer>> waiting = new ArrayList<>();
    for (int n = 3; n <= 5; n++) {
      waiting.add(batcher.callAsync(n).toCompletableFuture());
    }
    awaitQueued(batcher, 3);
    assertThat(store.singles).hasValue(2);
    store.gate.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(10);
    assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(20);
    for (int i = 0; i < waiting.size(); i++) {
      assertThat(waiting.get(i).get(10, TimeUnit.SECONDS)).isEqualTo((i + 3) * 10);
    }
    assertThat(store.batches).containsExactly(List.of(3, 4, 5));
  }

  @Test
  void aStoreAskingForMoreBatchesThanTheMostInFlightIsRefused() {
    assertThatThrownBy(() -> new Batcher<>(new Doubling(), 128, 5, 4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("atOnce");
  }

  @Test
  void aBatchOfAsynchronousCallersAloneGoesThroughTheAsynchronousCall() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);
    Future<Integer> first = underWay(store, () -> batcher.callAsync(1).toCompletableFuture());
    CompletableFuture<Integer> second = batcher.callAsync(2).toCompletableFuture();
    CompletableFuture<Integer> third = batcher.callAsync(3).toCompletableFuture();
    store.gate.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(10);
    assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(20);
    assertThat(third.get(10, TimeUnit.SECONDS)).isEqualTo(30);
    assertThat(store.batches).containsExactly(List.of(2, 3));
  }

  /**
   * A full batch waiting goes alongside the one under way, up to the most in flight; when they
   * return, the engine is back to one batch at a time.
   */
  @Test
  void aFullBatchWaitingGoesAlongsideUpToTheMostInFlight() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 3, 1, 2);
    store.gate = new CountDownLatch(1);
    List<CompletableFuture<Integer>> answers = new ArrayList<>();
    answers.add(batcher.callAsync(1).toCompletableFuture());
    awaitSingles(store, 1);
    for (int i = 2; i <= 4; i++) {
      answers.add(batcher.callAsync(i).toCompletableFuture());
    }
    awaitBatches(store, 1);
    assertThat(store.batches.get(0)).containsExactly(2, 3, 4);
    for (int i = 5; i <= 8; i++) {
      answers.add(batcher.callAsync(i).toCompletableFuture());
    }
    assertThat(batcher.queued()).isEqualTo(4); // two under way: full batches wait too
    assertThat(store.batches).hasSize(1);
    store.gate.countDown();

    for (int i = 0; i < answers.size(); i++) {
      assertThat(answers.get(i).get(10, TimeUnit.SECONDS)).isEqualTo((i + 1) * 10);
    }
    assertThat(batcher.queued()).isZero();
    store.gate = new CountDownLatch(1);
    int singles = store.singles.get();
    CompletableFuture<Integer> alone = batcher.callAsync(9).toCompletableFuture();
    awaitSingles(store, singles + 1);
    CompletableFuture<Integer> waiting = batcher.callAsync(10).toCompletableFuture();
    assertThat(batcher.queued()).isEqualTo(1);
    store.gate.countDown();
    assertThat(alone.get(10, TimeUnit.SECONDS)).isEqualTo(90);
    assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(100);
  }

  /**
   * A batch that returns beside another leaves fewer than a full batch of waiting calls to that
   * one: the side-by-side batches last only while full ones wait.
   */
  @Test
  void aBatchReturningBesideAnotherLeavesAPartialQueueToIt() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 3, 1, 2);
    CountDownLatch firstGate = new CountDownLatch(1);
    CountDownLatch batchGate = new CountDownLatch(1);
    store.gate = firstGate;
    store.batchGate = batchGate;
    CompletableFuture<Integer> first = batcher.callAsync(1).toCompletableFuture();
    awaitSingles(store, 1);
    List<CompletableFuture<Integer>> full = new ArrayList<>();
    for (int i = 2; i <= 4; i++) {
      full.add(batcher.callAsync(i).toCompletableFuture());
    }
    awaitBatches(store, 1);
    CompletableFuture<Integer> late = batcher.callAsync(5).toCompletableFuture();
    batchGate.countDown(); // the full batch returns while the first call is still under way
    for (int i = 0; i < full.size(); i++) {
      assertThat(full.get(i).get(10, TimeUnit.SECONDS)).isEqualTo((i + 2) * 10);
    }
    // Nothing happens, so give the returned batch's thread time to do it wrongly.
    Thread.sleep(200);
    assertThat(batcher.queued()).isEqualTo(1);
    assertThat(store.singles).hasValue(1);
    firstGate.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(10);
    assertThat(late.get(10, TimeUnit.SECONDS)).isEqualTo(50);
    assertThat(store.singles).hasValue(2);
  }

  @Test
  void aStoreThatIsDownFailsEveryCallOfTheBatch() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);
    Future<Integer> first = underWay(store, () -> callers.submit(() -> batcher.call(1)));
    Future<Integer> second = callers.submit(() -> batcher.call(2));
    CompletableFuture<Integer> third = batcher.callAsync(3).toCompletableFuture();
    awaitQueued(batcher, 2);
    store.failure = new StoreUnavailableException("down");
    store.gate.countDown();

    assertThatThrownBy(first::get).hasCauseInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(second::get).hasCauseInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(third::get).hasCauseInstanceOf(StoreUnavailableException.class);
    assertThat(store.batches).hasSize(1);
    assertThat(store.singles).hasValue(1); // the batch was not split: the store was down for all
  }

  @Test
  void oneRecordsProblemReachesOnlyItsCaller() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);
    Future<Integer> first = underWay(store, () -> callers.submit(() -> batcher.call(1)));
    Future<Integer> good = callers.submit(() -> batcher.call(2));
    Future<Integer> bad = callers.submit(() -> batcher.call(3));
    CompletableFuture<Integer> goodAsync = batcher.callAsync(4).toCompletableFuture();
    awaitQueued(batcher, 3);
    store.poison = 3;
    store.gate.countDown();

    assertThat(first.get()).isEqualTo(10);
    assertThat(good.get()).isEqualTo(20);
    assertThat(goodAsync.get(10, TimeUnit.SECONDS)).isEqualTo(40);
    assertThatThrownBy(bad::get)
        .hasCauseInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("poison 3");
  }

  /**
   * A batch of asynchronous callers finds the failing record with asynchronous calls too: the
   * batch's answer may arrive on the store client's event loop, where a blocking call would wait
   * for a reply that only that thread can read.
   */
  @Test
  void anAsynchronousBatchFindsTheFailingRecordWithoutBlocking() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 128, 1, 1);
    Future<Integer> first = underWay(store, () -> batcher.callAsync(1).toCompletableFuture());
    CompletableFuture<Integer> good = batcher.callAsync(2).toCompletableFuture();
    CompletableFuture<Integer> bad = batcher.callAsync(3).toCompletableFuture();
    CompletableFuture<Integer> alsoGood = batcher.callAsync(4).toCompletableFuture();
    store.poison = 3;
    store.gate.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(10);
    assertThat(good.get(10, TimeUnit.SECONDS)).isEqualTo(20);
    assertThat(alsoGood.get(10, TimeUnit.SECONDS)).isEqualTo(40);
    assertThatThrownBy(() -> bad.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("poison 3");
    assertThat(store.batches).containsExactly(List.of(2, 3, 4));
    assertThat(store.singles).hasValue(4); // the first, then each of the batch alone
    assertThat(store.blockingSingles).hasValue(0);
    assertThat(batcher.callAsync(5).toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(50);
  }

  @Test
  void aBatchNeverCarriesMoreThanItsMaximum() throws Exception {
    Doubling store = new Doubling();
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 3, 1, 1);
    Future<Integer> first = underWay(store, () -> batcher.callAsync(0).toCompletableFuture());
    List<CompletableFuture<Integer>> rest = new ArrayList<>();
    for (int i = 1; i <= 7; i++) {
      rest.add(batcher.callAsync(i).toCompletableFuture());
    }
    store.gate.countDown();

    assertThat(first.get(10, TimeUnit.SECONDS)).isZero();
    for (int i = 0; i < rest.size(); i++) {
      assertThat(rest.get(i).get(10, TimeUnit.SECONDS)).isEqualTo((i + 1) * 10);
    }
    assertThat(store.batches).extracting(List::size).containsExactly(3, 3);
    assertThat(store.singles).hasValue(2); // the first call, and the seventh alone after them
  }

  @Test
  void manyCallersMixingBothKindsAreAllAnsweredAndNoneIsLost() throws Exception {
    Doubling store = new Doubling();
    // Batches of four with eight callers: full ones wait often, so batches go side by side and
    // back to one at a time all the way through.
    Batcher<Integer, Integer> batcher = new Batcher<>(store, 4, 1, 2);
    int perThread = 2_000;
    List<Future<Integer>> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      int base = t * perThread;
      threads.add(
          callers.submit(
              () -> {
                int wrong = 0;
                for (int i = 0; i < perThread; i++) {
                  int n = base + i;
                  int answer =
                      i % 3 == 0
                          ? batcher.callAsync(n).toCompletableFuture().get(10, TimeUnit.SECONDS)
                          : batcher.call(n);
                  if (answer != n * 10) {
                    wrong++;
                  }
                }
                return wrong;
              }));
    }
    for (Future<Integer> t : threads) {
      assertThat(t.get(60, TimeUnit.SECONDS)).isZero();
    }
    int batched = store.batches.stream().mapToInt(List::size).sum();
    assertThat(batched + store.singles.get()).isEqualTo(8 * perThread);
  }

  private static void awaitSingles(Doubling store, int n) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (store.singles.get() < n && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(store.singles).hasValue(n);
  }

  private static void awaitBatches(Doubling store, int n) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (store.batches.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(store.batches).hasSize(n);
  }

  /** Holds the store at its gate with the one call {@code call} makes under way. */
  private static Future<Integer> underWay(Doubling store, Supplier<Future<Integer>> call)
      throws InterruptedException {
    store.gate = new CountDownLatch(1);
    Future<Integer> first = call.get();
    awaitSingles(store, 1);
    return first;
  }

  /**
   * Holds the store at its gate with call 1 under way, queues {@code calls} asynchronously behind
   * it, lets the store go, and answers theirs in order.
   */
  private List<Integer> behindOneUnderWay(
      Doubling store, Batcher<Integer, Integer> batcher, int... calls) throws Exception {
    Future<Integer> first = underWay(store, () -> callers.submit(() -> batcher.call(1)));
    List<CompletableFuture<Integer>> queued = new ArrayList<>();
    for (int n : calls) {
      queued.add(batcher.callAsync(n).toCompletableFuture());
    }
    awaitQueued(batcher, calls.length);
    store.gate.countDown();
    assertThat(first.get()).isEqualTo(10);
    List<Integer> answers = new ArrayList<>();
    for (CompletableFuture<Integer> answer : queued) {
      answers.add(answer.get(10, TimeUnit.SECONDS));
    }
    return answers;
  }

  private static void awaitQueued(Batcher<?, ?> batcher, int n) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (batcher.queued() < n && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(batcher.queued()).isEqualTo(n);
  }
}

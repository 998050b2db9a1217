package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.tck.Eventually;
import dev.once.tck.FakeClock;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PurgerTest {

  @TempDir Path dir;

  final FakeClock clock = FakeClock.create();
  EmbeddedStore store;

  @BeforeEach
  void open() {
    store =
        EmbeddedStore.builder(dir)
            .clock(clock)
            .durability(EmbeddedStore.Durability.SURVIVES_PROCESS_CRASH)
            .build();
  }

  @AfterEach
  void close() {
    store.close();
  }

  /** Completes {@code n} records that expire after one second; returns their ids. */
  List<RecordId> completed(int n) {
    List<RecordId> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      RecordId id = JdbcStoreBehaviour.newId();
      ClaimResult.Claimed c =
          (ClaimResult.Claimed) store.claim(JdbcStoreBehaviour.request(id, Duration.ofMillis(500)));
      store.complete(id, c.token(), new byte[] {1}, Duration.ofSeconds(1));
      ids.add(id);
    }
    return ids;
  }

  /** The store, with the size of every batch it purged added to {@code batches}. */
  IdempotencyStore recordingBatches(List<Integer> batches) {
    return (IdempotencyStore)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {IdempotencyStore.class},
            (proxy, method, args) -> {
              Object result = method.invoke(store, args);
              if (method.getName().equals("purgeExpired")) {
                batches.add((Integer) result);
              }
              return result;
            });
  }

  @Test
  void purgeNowDeletesEveryExpiredRecordInBatchesAndKeepsLiveOnes() throws Exception {
    completed(25);
    clock.advance(Duration.ofSeconds(2));
    RecordId live = completed(1).get(0);
    try (Purger purger =
        Purger.builder(store)
            .batchSize(10)
            .pause(Duration.ZERO)
            .initialDelay(Duration.ofHours(1))
            .start()) {
      assertThat(purger.purgeNow()).isEqualTo(25);
      assertThat(purger.purgeNow()).isZero();
    }
    assertThat(store.get(live)).isPresent();
  }

  @Test
  void aBuiltPurgerDeletesOnlyWhenAsked() throws Exception {
    completed(15);
    clock.advance(Duration.ofSeconds(2));
    List<Integer> batches = new CopyOnWriteArrayList<>();
    IdempotencyStore recording = recordingBatches(batches);
    try (Purger purger =
        Purger.builder(recording)
            .batchSize(10)
            .pause(Duration.ZERO)
            .interval(Duration.ofMillis(10))
            .build()) {
      Thread.sleep(200); // twenty intervals: a scheduled purger would have run
      assertThat(batches).as("nothing before it is asked").isEmpty();

      assertThat(purger.purgeNow()).isEqualTo(15);
      assertThat(batches).containsExactly(10, 5);
    }
  }

  @Test
  void aStartedPurgerKeepsDeletingFullBatchesOnTheGivenExecutorAndLeavesItRunning()
      throws Exception {
    completed(35);
    clock.advance(Duration.ofSeconds(2));
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    List<Integer> batches = new CopyOnWriteArrayList<>();
    IdempotencyStore recording = recordingBatches(batches);
    try {
      try (Purger purger =
          Purger.builder(recording)
              .batchSize(10)
              .pause(Duration.ofMillis(10))
              .interval(Duration.ofMinutes(10))
              .executor(executor)
              .start()) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (batches.size() < 4 && System.nanoTime() < end) {
          Thread.sleep(20);
        }
        Thread.sleep(100);
        assertThat(batches)
            .as("one round: full batches, then the short one, then nothing until the interval")
            .containsExactly(10, 10, 10, 5);
      }
      assertThat(store.purgeExpired(100)).isZero();
      assertThat(executor.isShutdown()).isFalse();
    } finally {
      executor.shutdownNow();
    }
  }

  @Test
  void anErrorThrownByABatchDoesNotStopThePurger() throws Exception {
    completed(3);
    clock.advance(Duration.ofSeconds(2));
    AtomicInteger calls = new AtomicInteger();
    CountDownLatch purgedAfterTheError = new CountDownLatch(1);
    IdempotencyStore failingOnce =
        (IdempotencyStore)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {IdempotencyStore.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("purgeExpired") && calls.incrementAndGet() == 1) {
                    throw new LinkageError("a driver class failed to load");
                  }
                  Object result = method.invoke(store, args);
                  if (method.getName().equals("purgeExpired")) {
                    purgedAfterTheError.countDown();
                  }
                  return result;
                });
    try (Purger purger =
        Purger.builder(failingOnce)
            .batchSize(10)
            .pause(Duration.ZERO)
            .interval(Duration.ofMillis(20))
            .start()) {
      assertThat(purgedAfterTheError.await(10, TimeUnit.SECONDS))
          .as("a batch after the error")
          .isTrue();
    }
    assertThat(store.purgeExpired(100)).isZero();
  }

  @Test
  void optionsAreValidatedWhenSet() {
    Purger.Builder b = Purger.builder(store);
    assertThatThrownBy(() -> Purger.builder(null)).hasMessageContaining("store");
    assertThatThrownBy(() -> b.batchSize(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("batchSize");
    assertThatThrownBy(() -> b.interval(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("interval");
    assertThatThrownBy(() -> b.pause(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("pause");
    assertThatThrownBy(
            () ->
                Purger.builder(store)
                    .interval(Duration.ofSeconds(1))
                    .pause(Duration.ofSeconds(2))
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("pause");
  }

  @Test
  void closingAnOwnPurgerStopsItsThread() throws Exception {
    Purger purger = Purger.builder(store).start();
    Eventually.assertThat(
        "the purger thread runs", Duration.ofSeconds(10), () -> purgerThreads() > 0);
    purger.close();
    Eventually.assertThat(
        "the purger thread ended", Duration.ofSeconds(10), () -> purgerThreads() == 0);
  }

  private static long purgerThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("once-purger") && t.isAlive())
        .count();
  }
}

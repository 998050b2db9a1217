package dev.once.store.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.IdempotencyRecord;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import dev.once.tck.Eventually;
import dev.once.tck.RequiredServices;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The store against a Redis this test owns and kills with SIGKILL: it fails fast and cleanly while
 * Redis is down, recovers by itself when Redis is back, and keeps completed records across a crash
 * exactly when Redis persists every write.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisStoreFaultTest {

  private static final Duration TIMEOUT = Duration.ofMillis(500);
  private static final Duration LONG = Duration.ofMinutes(30);

  /** How long Lettuce may take to reconnect in the background after a restart. */
  private static final Duration RECONNECT = Duration.ofSeconds(30);

  private RedisServerProcess server;
  private ClientResources resources;
  private RedisClient client;
  private RedisStore store;

  @BeforeAll
  static void needsRedisBinaries() {
    RequiredServices.assume(
        RedisServerProcess.binariesAvailable(), "redis-server and redis-cli on the PATH");
  }

  @AfterEach
  void tearDown() {
    if (store != null) {
      store.close();
    }
    if (client != null) {
      client.shutdown();
    }
    if (resources != null) {
      resources.shutdown();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void
      operationsFailWithStoreUnavailableWithinTheTimeoutWhileRedisIsDownAndRecoverAfterItRestarts() {
    open("--appendonly", "no");
    RecordId before = dev.once.tck.Samples.newId();
    claimed(
        store.claim(new ClaimRequest(before, dev.once.tck.Samples.newFingerprint(), LONG, LONG)));
    int threadsBefore = Thread.activeCount();

    server.kill();

    for (int i = 0; i < 6; i++) {
      RecordId id = dev.once.tck.Samples.newId();
      long start = System.nanoTime();
      assertThatThrownBy(
              () ->
                  store.claim(
                      new ClaimRequest(id, dev.once.tck.Samples.newFingerprint(), LONG, LONG)))
          .isInstanceOf(StoreUnavailableException.class);
      assertThatThrownBy(() -> store.get(id)).isInstanceOf(StoreUnavailableException.class);
      // The timeout bounds EVALSHA and, if the script cache was lost, EVAL together; the rest is
      // slack for a slow machine.
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isLessThan(TIMEOUT.multipliedBy(4).plusSeconds(1));
    }
    assertThat(Thread.activeCount())
        .as("live threads after a dozen failed operations")
        .isLessThanOrEqualTo(threadsBefore + 4);

    server.restart();

    RecordId after = dev.once.tck.Samples.newId();
    Claimed claimed =
        Eventually.available(
            "Lettuce reconnected",
            RECONNECT,
            () ->
                claimed(
                    store.claim(
                        new ClaimRequest(
                            after, dev.once.tck.Samples.newFingerprint(), LONG, LONG))));
    assertThat(store.complete(after, claimed.token(), utf8("done"), LONG)).isTrue();
    assertThat(store.get(after)).map(IdempotencyRecord::state).contains(RecordState.COMPLETED);
  }

  @Test
  void aBatchedHeartbeatThatGetsNoReplyWithinTheTimeoutThrowsStoreUnavailable() {
    open("--appendonly", "no");
    List<LeaseToken> held = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      RecordId id = dev.once.tck.Samples.newId();
      held.add(
          new LeaseToken(
              id,
              claimed(
                      store.claim(
                          new ClaimRequest(id, dev.once.tck.Samples.newFingerprint(), LONG, LONG)))
                  .token()));
    }
    // Redis holds every command that may write (scripts included) until the pause ends, as a
    // stalled server would.
    server.cli("client", "pause", "20000", "write");
    try {
      long start = System.nanoTime();

      assertThatThrownBy(() -> store.heartbeat(held, LONG))
          .isInstanceOf(StoreUnavailableException.class);

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(TIMEOUT.plusSeconds(2));
    } finally {
      server.cli("client", "unpause");
    }
  }

  @Test
  void aCompletionInterruptedWhileWaitingForItsReplyStillGetsItAndKeepsTheInterrupt()
      throws Exception {
    open("--appendonly", "no");
    RecordId id = dev.once.tck.Samples.newId();
    Claimed claimed =
        claimed(
            store.claim(new ClaimRequest(id, dev.once.tck.Samples.newFingerprint(), LONG, LONG)));
    // Long enough a stall for the completion to be sent and waiting when the interrupt comes; well
    // inside the timeout.
    RedisStore patient = RedisStore.builder(client).commandTimeout(Duration.ofSeconds(30)).build();
    CompletableFuture<Boolean> completed = new CompletableFuture<>();
    CompletableFuture<Boolean> interruptKept = new CompletableFuture<>();
    Thread completer =
        new Thread(
            () -> {
              try {
                completed.complete(patient.complete(id, claimed.token(), utf8("done"), LONG));
              } catch (RuntimeException e) {
                completed.completeExceptionally(e);
              } finally {
                interruptKept.complete(Thread.interrupted());
              }
            },
            "completer");
    server.cli("client", "pause", "20000", "write");
    try {
      completer.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (completer.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      completer.interrupt();
    } finally {
      server.cli("client", "unpause");
    }

    assertThat(completed.get(20, TimeUnit.SECONDS)).isTrue();
    assertThat(interruptKept.get(20, TimeUnit.SECONDS)).as("the interrupt, still set").isTrue();
    assertThat(store.get(id)).map(IdempotencyRecord::state).contains(RecordState.COMPLETED);
    patient.close();
  }

  @Test
  void aWaiterSubscribedBeforeRedisRestartsIsWokenByACompletionAfterIt() throws Exception {
    open("--appendonly", "yes", "--appendfsync", "always");
    RecordId id = dev.once.tck.Samples.newId();
    Claimed claimed =
        claimed(
            store.claim(new ClaimRequest(id, dev.once.tck.Samples.newFingerprint(), LONG, LONG)));
    java.util.concurrent.CompletableFuture<Void> change = store.awaitChange(id);

    server.restart();
    // Lettuce subscribes the channel again once its pub/sub connection is back.
    String channel =
        new String(
            new KeyLayout(RedisStore.DEFAULT_KEY_PREFIX).channel(id), StandardCharsets.UTF_8);
    Eventually.assertThat(
        "the store subscribed again",
        RECONNECT,
        () -> server.cli("pubsub", "numsub", channel).trim().endsWith("1"));
    assertThat(store.complete(id, claimed.token(), utf8("done"), LONG)).isTrue();

    change.get(10, TimeUnit.SECONDS);
  }

  @Test
  void withAppendFsyncAlwaysACompletedRecordSurvivesAKillAndRestart() {
    open("--appendonly", "yes", "--appendfsync", "always");
    RecordId id = dev.once.tck.Samples.newId();
    Claimed claimed =
        claimed(
            store.claim(new ClaimRequest(id, dev.once.tck.Samples.newFingerprint(), LONG, LONG)));
    byte[] result = new byte[256 * 1024];
    for (int i = 0; i < result.length; i++) {
      result[i] = (byte) i;
    }
    assertThat(store.complete(id, claimed.token(), result, LONG)).isTrue();

    server.restart();

    Optional<IdempotencyRecord> record =
        Eventually.available("Lettuce reconnected", RECONNECT, () -> store.get(id));
    assertThat(record).isPresent();
    assertThat(record.get().state()).isEqualTo(RecordState.COMPLETED);
    assertThat(record.get().token()).isEqualTo(claimed.token());
    assertThat(record.get().result()).isEqualTo(result);
  }

  @Test
  void withoutPersistenceACompletedRecordIsLostWhenRedisIsKilled() {
    open("--appendonly", "no");
    RecordId id = dev.once.tck.Samples.newId();
    Claimed claimed =
        claimed(
            store.claim(new ClaimRequest(id, dev.once.tck.Samples.newFingerprint(), LONG, LONG)));
    assertThat(store.complete(id, claimed.token(), utf8("done"), LONG)).isTrue();

    server.restart();

    // Documented in docs/redis-store.md: without AOF, a crash forgets every record, so a retry runs
    // again.
    assertThat(Eventually.available("Lettuce reconnected", RECONNECT, () -> store.get(id)))
        .isEmpty();
  }

  private void open(String... serverArgs) {
    server = RedisServerProcess.start(serverArgs);
    resources =
        ClientResources.builder()
            .reconnectDelay(
                Delay.exponential(
                    Duration.ofMillis(10), Duration.ofMillis(500), 2, TimeUnit.MILLISECONDS))
            .build();
    client =
        RedisClient.create(
            resources,
            RedisURI.builder()
                .withHost("127.0.0.1")
                .withPort(server.port())
                .withTimeout(TIMEOUT)
                .build());
    store = RedisStore.builder(client).commandTimeout(TIMEOUT).build();
  }

  private static Claimed claimed(Object result) {
    assertThat(result).isInstanceOf(Claimed.class);
    return (Claimed) result;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}

package dev.once.store.redis;

import static dev.once.tck.Samples.newFingerprint;
import static dev.once.tck.Samples.newId;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Admission;
import dev.once.Claim;
import dev.once.ExecutionPolicy;
import dev.once.Once;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A record this version cannot read, as when two versions share a store and the later one wrote a
 * state the earlier does not know: it is answered as unreadable, never overwritten, and never fails
 * the other records of a batch.
 */
@Timeout(60)
class RedisForeignRecordTest {

  private static final Duration LONG = Duration.ofMinutes(30);
  private static final ExecutionPolicy POLICY = ExecutionPolicy.builder().lease(LONG).build();

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

  /**
   * A record key that holds a value of another type (something else wrote there): a record this
   * version cannot read, never an outage. Fail-open would run the work unguarded on every retry of
   * an outage; here it is never run, and the value is left as it is.
   */
  @Test
  void aKeyOfAnotherTypeIsNeverRunEvenFailOpenAndIsLeftAsItIs() throws Exception {
    RecordId id = newId();
    byte[] notAHash = "written by another application".getBytes(StandardCharsets.UTF_8);
    redis.set(key(id), notAHash);
    ExecutionPolicy failOpen =
        POLICY.toBuilder().failureMode(dev.once.FailureMode.FAIL_OPEN).build();
    AtomicInteger runs = new AtomicInteger();

    try (Once once = Once.of(store)) {
      for (int i = 0; i < 2; i++) {
        dev.once.ExecutionResult<String> answer =
            once.execute(
                id.scope(),
                id.key(),
                newFingerprint(),
                dev.once.ResultCodec.utf8(),
                dev.once.OutcomeClassifier.defaults(),
                failOpen,
                ctx -> "ran " + runs.incrementAndGet());
        assertThat(answer).isInstanceOf(dev.once.ExecutionResult.ResponseUnavailable.class);
      }
      Admission async =
          once.beginAsync(id.scope(), id.key(), newFingerprint(), failOpen)
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
      assertThat(async).isInstanceOf(Admission.ResponseUnavailable.class);
    }
    assertThat(runs).hasValue(0);
    assertThat(redis.get(key(id))).isEqualTo(notAHash);
  }

  /** A consumer's poll: the engine claims the others and answers the foreign one alone. */
  @Test
  void theEngineRunsTheOthersOfAPollAndAnswersTheForeignOneAsResponseUnavailable() {
    RecordId foreign = newId();
    plantForeign(foreign);
    List<Claim> claims = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      RecordId id = newId();
      claims.add(new Claim(id.scope(), id.key(), newFingerprint()));
    }
    claims.add(1, new Claim(foreign.scope(), foreign.key(), newFingerprint()));

    try (Once once = Once.of(store)) {
      List<Admission> admissions = once.beginAll(claims, POLICY);

      for (int i = 0; i < claims.size(); i++) {
        if (i == 1) {
          assertThat(admissions.get(i)).isInstanceOf(Admission.ResponseUnavailable.class);
        } else {
          assertThat(admissions.get(i)).isInstanceOf(Admission.Proceed.class);
          ((Admission.Proceed) admissions.get(i)).lease().release();
        }
      }
    }
  }

  /**
   * Concurrent asynchronous claims that the engine gathers into one batch: the foreign record fails
   * the batch, and each claim is then made alone. Redis answers the batch on its client's event
   * loop; a claim made alone there with a blocking call would wait for a reply only that thread can
   * read, until the command timeout failed it as "store unavailable".
   */
  @Test
  void gatheredAsynchronousClaimsAreEachAnsweredForThemselves() throws Exception {
    RecordId foreign = newId();
    plantForeign(foreign);
    HeldDoors doors = new HeldDoors(store);
    try (Once once = Once.of(doors)) {
      // Hold as many claims as the engine sends at once, so that the next ones queue as one batch.
      List<CompletableFuture<Admission>> held = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        RecordId door = newId();
        doors.held.add(door);
        held.add(begin(once, door));
      }
      doors.reached.await(10, TimeUnit.SECONDS);
      List<RecordId> ids = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        ids.add(newId());
      }
      ids.add(2, foreign);
      Map<RecordId, CompletableFuture<Admission>> queued = new LinkedHashMap<>();
      for (RecordId id : ids) {
        queued.put(id, begin(once, id));
      }
      doors.open.countDown();

      for (CompletableFuture<Admission> door : held) {
        finish(door.get(10, TimeUnit.SECONDS));
      }
      for (Map.Entry<RecordId, CompletableFuture<Admission>> e : queued.entrySet()) {
        Admission admission = e.getValue().get(10, TimeUnit.SECONDS);
        if (e.getKey().equals(foreign)) {
          assertThat(admission).isInstanceOf(Admission.ResponseUnavailable.class);
        } else {
          assertThat(admission).as("%s", e.getKey()).isInstanceOf(Admission.Proceed.class);
          finish(admission);
        }
      }
      assertThat(doors.batches).as("claim batches the engine sent").hasValue(1);
    }
  }

  private static CompletableFuture<Admission> begin(Once once, RecordId id) {
    return once.beginAsync(id.scope(), id.key(), newFingerprint(), POLICY).toCompletableFuture();
  }

  private static void finish(Admission admission) {
    assertThat(admission).isInstanceOf(Admission.Proceed.class);
    ((Admission.Proceed) admission).lease().release();
  }

  /**
   * The Redis store, gathered by the engine as it is, whose claims of the {@code held} keys wait
   * until {@code open}; counts the batches of claims it is sent.
   */
  private static final class HeldDoors extends ForwardingStore {
    final RedisStore store;
    final Set<RecordId> held = java.util.concurrent.ConcurrentHashMap.newKeySet();
    final CountDownLatch reached = new CountDownLatch(4);
    final CountDownLatch open = new CountDownLatch(1);
    final AtomicInteger batches = new AtomicInteger();

    HeldDoors(RedisStore store) {
      this.store = store;
    }

    @Override
    protected IdempotencyStore delegate() {
      return store;
    }

    @Override
    public boolean batches() {
      return store.batches();
    }

    @Override
    public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
      if (!held.contains(request.id())) {
        return store.claimAsync(request, blocking);
      }
      reached.countDown();
      return CompletableFuture.runAsync(
              () -> {
                try {
                  open.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              })
          .thenCompose(opened -> store.claimAsync(request, blocking));
    }

    @Override
    public CompletionStage<List<ClaimResult>> claimAllAsync(
        List<ClaimRequest> requests, Executor blocking) {
      batches.incrementAndGet();
      return store.claimAllAsync(requests, blocking);
    }
  }

  /**
   * A finished record at {@code id} whose state is then set to {@code A}, which this version does
   * not know, as a later version might add (the contract kit checks the store's own answers to it).
   */
  private void plantForeign(RecordId id) {
    long token =
        ((ClaimResult.Claimed) store.claim(new ClaimRequest(id, newFingerprint(), LONG, LONG)))
            .token();
    assertThat(store.complete(id, token, ascii("a later version's result"), LONG)).isTrue();
    redis.hset(key(id), ascii("s"), ascii("A"));
  }

  private byte[] key(RecordId id) {
    return new KeyLayout(prefix).recordKey(id);
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}

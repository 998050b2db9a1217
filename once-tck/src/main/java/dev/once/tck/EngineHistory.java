package dev.once.tck;

import dev.once.Admission;
import dev.once.Claim;
import dev.once.ExecutionPolicy;
import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.InFlightPolicy;
import dev.once.Once;
import dev.once.Operation;
import dev.once.OutcomeClassifier;
import dev.once.ResultCodec;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A seeded random concurrent history at the engine's level: many threads over a small key space (so
 * that duplicates collide), each drawing a mix of {@code execute}, {@code executeAsync}, {@code
 * begin}, {@code beginAsync}, overlapping {@code beginAll} batches, work that fails transiently
 * before its effect, a request with another fingerprint and waiting duplicates; then checked
 * against the ledger rule: at most one effect per key, every replay answers that effect's result,
 * and no key is left in flight once every caller is done.
 *
 * <p>A seed reproduces each worker's operations, not their interleaving; a failure names the seed,
 * and {@code -Donce.history.seed=N} runs the same operations again. {@code -Donce.history.ops=N}
 * sets the operations per thread (the chaos profile runs many more).
 */
final class EngineHistory {

  /** The system property that fixes the seed of a run. */
  static final String SEED = "once.history.seed";

  /** The system property that sets how many operations each thread makes. */
  static final String OPS = "once.history.ops";

  private static final ResultCodec<String> UTF8 = ResultCodec.utf8();
  private static final int OPERATIONS = 8;

  private final Once once;
  private final IdempotencyStore store;
  private final long seed;
  private final int threads;
  private final int opsPerThread;
  private final Duration budget;
  private final List<RecordId> keys = new ArrayList<>();
  private final List<Fingerprint> prints = new ArrayList<>();
  private final List<List<String>> effects = new ArrayList<>();
  private final List<List<String>> replays = new ArrayList<>();
  private final AtomicLong effectCount = new AtomicLong();
  private final AtomicLong storeFailures = new AtomicLong();

  EngineHistory(
      Once once,
      IdempotencyStore store,
      int threads,
      int keyCount,
      int opsPerThread,
      Duration budget) {
    this.once = once;
    this.store = store;
    this.seed = Long.getLong(SEED, System.nanoTime());
    this.threads = threads;
    this.opsPerThread = Integer.getInteger(OPS, opsPerThread);
    this.budget = budget;
    Random keysRandom = new Random(seed);
    for (int i = 0; i < keyCount; i++) {
      keys.add(Samples.newId());
      prints.add(new Fingerprint(1, Long.toHexString(keysRandom.nextLong() | Long.MIN_VALUE)));
      effects.add(Collections.synchronizedList(new ArrayList<>()));
      replays.add(Collections.synchronizedList(new ArrayList<>()));
    }
  }

  long seed() {
    return seed;
  }

  /** Runs the history and returns what broke the ledger rule; empty when nothing did. */
  List<String> run() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long deadline = System.nanoTime() + budget.toNanos();
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Random random = new Random(seed * 31 + t);
        workers.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int op = 0; op < opsPerThread && System.nanoTime() < deadline; op++) {
                    step(random);
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> worker : workers) {
        worker.get(budget.toSeconds() + 60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    return check();
  }

  private void step(Random random) {
    int k = random.nextInt(keys.size());
    RecordId id = keys.get(k);
    boolean otherRequest = random.nextInt(20) == 0;
    Fingerprint fp = otherRequest ? Samples.newFingerprint() : prints.get(k);
    ExecutionPolicy policy =
        random.nextInt(4) == 0
            ? once.defaults().toBuilder()
                .inFlight(InFlightPolicy.waitUpTo(Duration.ofMillis(200)))
                .build()
            : once.defaults();
    switch (random.nextInt(OPERATIONS)) {
      case 0, 1 -> replayed(k, execute(id, fp, policy, ctx -> effect(k)));
      case 2 ->
          replayed(
              k,
              once.executeAsync(
                      id.scope(),
                      id.key(),
                      fp,
                      UTF8,
                      OutcomeClassifier.defaults(),
                      policy,
                      ctx -> CompletableFuture.supplyAsync(() -> effect(k)))
                  .toCompletableFuture()
                  .join());
      case 3 -> admitted(k, once.begin(id.scope(), id.key(), fp, policy), false);
      case 4 ->
          admitted(
              k,
              once.beginAsync(id.scope(), id.key(), fp, policy).toCompletableFuture().join(),
              true);
      case 5 -> {
        Set<Integer> batch = new LinkedHashSet<>();
        batch.add(k);
        batch.add(random.nextInt(keys.size()));
        batch.add(random.nextInt(keys.size()));
        List<Integer> order = new ArrayList<>(batch);
        List<Claim> claims = new ArrayList<>();
        for (int i : order) {
          claims.add(new Claim(keys.get(i).scope(), keys.get(i).key(), prints.get(i)));
        }
        List<Admission> admissions = once.beginAll(claims, policy);
        for (int i = 0; i < order.size(); i++) {
          admitted(order.get(i), admissions.get(i), false);
        }
      }
      case 6 -> {
        // Work that fails before its effect: released, so a later request runs it afresh.
        try {
          replayed(
              k,
              execute(
                  id,
                  fp,
                  policy,
                  ctx -> {
                    throw new IllegalStateException("transient, before any effect");
                  }));
        } catch (IllegalStateException expected) {
          // the engine released the key and rethrew
        }
      }
      default -> {
        // A lease given back unused, as a consumer's batch that stopped early does.
        Admission a = once.begin(id.scope(), id.key(), fp, policy);
        if (a instanceof Admission.Proceed p) {
          p.lease().giveBack();
        } else {
          admitted(k, a, false);
        }
      }
    }
  }

  private ExecutionResult<String> execute(
      RecordId id, Fingerprint fp, ExecutionPolicy policy, Operation<String> operation) {
    return once.execute(
        id.scope(), id.key(), fp, UTF8, OutcomeClassifier.defaults(), policy, operation);
  }

  private String effect(int k) {
    String value = "key " + k + " effect " + effectCount.incrementAndGet();
    effects.get(k).add(value);
    return value;
  }

  private void admitted(int k, Admission admission, boolean async) {
    if (admission instanceof Admission.Proceed p) {
      byte[] value = effect(k).getBytes(StandardCharsets.UTF_8);
      if (async) {
        p.lease().completeAsync(value).toCompletableFuture().join();
      } else {
        p.lease().complete(value);
      }
    } else if (admission instanceof Admission.Replay r) {
      replays.get(k).add(UTF8.decode(r.value()));
    } else if (admission instanceof Admission.StoreUnavailable
        || admission instanceof Admission.Unguarded) {
      storeFailures.incrementAndGet();
    }
  }

  private void replayed(int k, ExecutionResult<String> result) {
    if (result instanceof ExecutionResult.Replayed<String> r) {
      replays.get(k).add(r.value());
    } else if (result instanceof ExecutionResult.StoreUnavailable<String>) {
      storeFailures.incrementAndGet();
    }
  }

  private List<String> check() {
    List<String> violations = new ArrayList<>();
    for (int k = 0; k < keys.size(); k++) {
      List<String> ran = List.copyOf(effects.get(k));
      if (ran.size() > 1) {
        violations.add("key " + k + " had " + ran.size() + " effects: " + ran);
      }
      for (String replay : List.copyOf(replays.get(k))) {
        if (ran.isEmpty() || !ran.get(0).equals(replay)) {
          violations.add("key " + k + " replayed '" + replay + "' but its effects were " + ran);
        }
      }
      Optional<IdempotencyRecord> record = store.get(keys.get(k));
      if (record.isPresent() && record.get().state() == RecordState.IN_PROGRESS) {
        violations.add("key " + k + " is left in flight: " + record.get());
      }
    }
    if (!violations.isEmpty()) {
      violations.add(
          0,
          "seed "
              + seed
              + " (run again with -D"
              + SEED
              + "="
              + seed
              + "); "
              + storeFailures.get()
              + " store failures");
    }
    return violations;
  }
}

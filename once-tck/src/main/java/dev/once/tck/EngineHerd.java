package dev.once.tck;

import dev.once.Admission;
import dev.once.Claim;
import dev.once.ExecutionPolicy;
import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.Lease;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.store.RecordId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A herd: many identical requests for a few new keys, sent at once through one entry point of the
 * engine, mixed with requests for keys of their own so that a store which gathers puts them in the
 * same batches. It records which lease tokens ran the work for each key: the ledger rule says one
 * execution, under one token, whatever the entry point and however the calls were gathered.
 */
final class EngineHerd {

  /** The engine's entry points a herd goes through. */
  enum Entry {
    EXECUTE,
    EXECUTE_ASYNC,
    BEGIN,
    BEGIN_ASYNC,
    /** {@code beginAll}: each caller's batch holds a herd key and a key of its own. */
    BEGIN_ALL
  }

  private static final ResultCodec<String> UTF8 = ResultCodec.utf8();
  private static final long MAX_SECONDS = 45;

  private final Once once;
  private final ExecutionPolicy policy;
  private final Map<RecordId, List<Long>> ran = new ConcurrentHashMap<>();
  private boolean toleratesStoreFailures;

  EngineHerd(Once once, ExecutionPolicy policy) {
    this.once = once;
    this.policy = policy;
  }

  /** Callers told that the store failed count as answered: for herds that meet injected faults. */
  EngineHerd toleratingStoreFailures() {
    toleratesStoreFailures = true;
    return this;
  }

  /** The tokens that ran the work for each key, in no order. */
  Map<RecordId, List<Long>> ran() {
    return ran;
  }

  /**
   * Sends {@code copies} identical requests for each of {@code herdKeys} new keys, and one request
   * for each of {@code loners} other new keys, all released at once; returns the herd's keys.
   */
  List<RecordId> run(Entry entry, int herdKeys, int copies, int loners) throws Exception {
    List<RecordId> herd = new ArrayList<>();
    List<Fingerprint> prints = new ArrayList<>();
    for (int i = 0; i < herdKeys; i++) {
      herd.add(Samples.newId());
      prints.add(Samples.newFingerprint());
    }
    List<Runnable> callers = new ArrayList<>();
    for (int c = 0; c < copies; c++) {
      for (int k = 0; k < herdKeys; k++) {
        RecordId id = herd.get(k);
        Fingerprint fp = prints.get(k);
        RecordId own = Samples.newId();
        callers.add(() -> call(entry, id, fp, own));
      }
    }
    for (int i = 0; i < loners; i++) {
      RecordId own = Samples.newId();
      callers.add(() -> call(entry, own, Samples.newFingerprint(), null));
    }
    Collections.shuffle(callers, new java.util.Random(herd.hashCode()));
    ExecutorService pool = Executors.newFixedThreadPool(callers.size());
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (Runnable caller : callers) {
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  caller.run();
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(MAX_SECONDS, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    return herd;
  }

  private void call(Entry entry, RecordId id, Fingerprint fp, @Nullable RecordId own) {
    switch (entry) {
      case EXECUTE ->
          expectNoFailure(
              once.execute(
                  id.scope(),
                  id.key(),
                  fp,
                  UTF8,
                  dev.once.OutcomeClassifier.defaults(),
                  policy,
                  ctx -> work(id, ctx.token())));
      case EXECUTE_ASYNC ->
          expectNoFailure(
              once.executeAsync(
                      id.scope(),
                      id.key(),
                      fp,
                      UTF8,
                      dev.once.OutcomeClassifier.defaults(),
                      policy,
                      ctx -> CompletableFuture.supplyAsync(() -> work(id, ctx.token())))
                  .toCompletableFuture()
                  .join());
      case BEGIN -> finish(id, once.begin(id.scope(), id.key(), fp, policy));
      case BEGIN_ASYNC ->
          finish(
              id, once.beginAsync(id.scope(), id.key(), fp, policy).toCompletableFuture().join());
      case BEGIN_ALL -> {
        List<Claim> claims = new ArrayList<>();
        claims.add(new Claim(id.scope(), id.key(), fp));
        if (own != null) {
          claims.add(new Claim(own.scope(), own.key(), Samples.newFingerprint()));
        }
        List<Admission> admissions = once.beginAll(claims, policy);
        finish(id, admissions.get(0));
        if (own != null) {
          finish(own, admissions.get(1));
        }
      }
    }
  }

  private String work(RecordId id, long token) {
    ran.computeIfAbsent(id, k -> Collections.synchronizedList(new ArrayList<>())).add(token);
    return "ran under " + token;
  }

  private void finish(RecordId id, Admission admission) {
    if (admission instanceof Admission.Proceed p) {
      Lease lease = p.lease();
      lease.complete(work(id, lease.token()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } else if (admission instanceof Admission.Unguarded
        || (admission instanceof Admission.StoreUnavailable && !toleratesStoreFailures)) {
      throw new AssertionError("the store failed during a herd: " + admission);
    }
  }

  private void expectNoFailure(ExecutionResult<String> result) {
    if ((result instanceof ExecutionResult.StoreUnavailable<String> && !toleratesStoreFailures)
        || result instanceof ExecutionResult.Failed<String>) {
      throw new AssertionError("the store failed during a herd: " + result);
    }
  }

  /** The keys whose work ran more than once, with the tokens it ran under. */
  static Map<RecordId, List<Long>> duplicates(Map<RecordId, List<Long>> ran) {
    Map<RecordId, List<Long>> twice = new ConcurrentHashMap<>();
    ran.forEach(
        (id, tokens) -> {
          if (tokens.size() > 1) {
            twice.put(id, List.copyOf(tokens));
          }
        });
    return twice;
  }

  /** Whether some claim batch held a herd key together with another call: the herd was gathered. */
  static boolean gathered(List<List<RecordId>> batches, List<RecordId> herd) {
    Set<RecordId> keys = Set.copyOf(herd);
    for (List<RecordId> batch : batches) {
      if (batch.size() > 1 && batch.stream().anyMatch(keys::contains)) {
        return true;
      }
    }
    return false;
  }
}

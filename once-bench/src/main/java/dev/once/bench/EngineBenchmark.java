package dev.once.bench;

import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.OutcomeClassifier;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.store.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's own cost per execute on the in-memory store, against the bare operation in the same
 * run: a new key each time (claim, run, complete) and a replay of a recorded key (claim answers
 * with the record), blocking and asynchronously. The fingerprint is computed once outside; {@code
 * FingerprintBenchmark} measures it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
public class EngineBenchmark {

  private static final byte[] RESULT =
      "{\"payment_id\":\"pay_123\",\"status\":\"succeeded\"}".getBytes(StandardCharsets.UTF_8);

  private final Scope scope = Scope.of("sha256:0123456789abcdef", "POST /payments");
  private final Fingerprint fingerprint = new Fingerprint(1, "ab".repeat(32));
  private final AtomicLong sequence = new AtomicLong();
  private InMemoryStore store;
  private Once once;
  private Once onceWithoutHeartbeat;
  private IdempotencyKey recorded;
  private String[] keys;

  @Setup(Level.Iteration)
  public void setUp() {
    store = InMemoryStore.builder().maxRecords(50_000_000).build();
    once = Once.of(store);
    onceWithoutHeartbeat =
        Once.builder(store)
            .defaults(dev.once.ExecutionPolicy.builder().heartbeat(false).build())
            .build();
    recorded = IdempotencyKey.of("recorded-key");
    once.execute(scope, recorded, fingerprint, ResultCodec.bytes(), ctx -> RESULT);
    keys = new String[1 << 16];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "0190a5e4-7c1e-7d2b-9c3a-" + String.format("%012x", i);
    }
  }

  @TearDown(Level.Iteration)
  public void tearDown() {
    once.close();
    onceWithoutHeartbeat.close();
  }

  /** The floor: the operation alone. */
  @Benchmark
  public byte[] bareOperation() {
    return RESULT.clone();
  }

  /** A first request: claim, run, complete, on a key never seen. */
  @Benchmark
  public ExecutionResult<byte[]> executeNewKey() {
    long n = sequence.incrementAndGet();
    IdempotencyKey key = IdempotencyKey.of(keys[(int) (n & (keys.length - 1))] + n);
    return once.execute(scope, key, fingerprint, ResultCodec.bytes(), ctx -> RESULT.clone());
  }

  /** The same, without the heartbeat task a lease schedules (its share of the cost). */
  @Benchmark
  public ExecutionResult<byte[]> executeNewKeyWithoutHeartbeat() {
    long n = sequence.incrementAndGet();
    IdempotencyKey key = IdempotencyKey.of(keys[(int) (n & (keys.length - 1))] + n);
    return onceWithoutHeartbeat.execute(
        scope, key, fingerprint, ResultCodec.bytes(), ctx -> RESULT.clone());
  }

  /**
   * {@link #executeNewKey} through the asynchronous API, with an operation whose stage is already
   * complete: the cost of carrying the same rules as stages instead of on the caller's thread.
   */
  @Benchmark
  public ExecutionResult<byte[]> executeAsyncNewKey() {
    long n = sequence.incrementAndGet();
    IdempotencyKey key = IdempotencyKey.of(keys[(int) (n & (keys.length - 1))] + n);
    return once.executeAsync(
            scope,
            key,
            fingerprint,
            ResultCodec.bytes(),
            OutcomeClassifier.defaults(),
            once.defaults(),
            ctx -> CompletableFuture.completedFuture(RESULT.clone()))
        .toCompletableFuture()
        .join();
  }

  /** A retry: the claim finds the record and the result is replayed. */
  @Benchmark
  public ExecutionResult<byte[]> executeReplay() {
    return once.execute(scope, recorded, fingerprint, ResultCodec.bytes(), ctx -> RESULT.clone());
  }
}

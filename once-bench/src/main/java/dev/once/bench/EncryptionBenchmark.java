package dev.once.bench;

import dev.once.ExecutionPolicy;
import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.store.EncryptingStore;
import dev.once.store.InMemoryStore;
import dev.once.store.Keyring;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What encryption at rest adds: the engine on the in-memory store, plain and through {@link
 * EncryptingStore} (AES-256-GCM), in the same run, for a new key (claim, run, seal, complete) and a
 * replay (claim, open, decode), with a small and a 16 KiB result.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
public class EncryptionBenchmark {

  @Param({"46", "16384"})
  public int resultBytes;

  private final Scope scope = Scope.of("sha256:0123456789abcdef", "POST /payments");
  private final Fingerprint fingerprint = new Fingerprint(1, "ab".repeat(32));
  private final AtomicLong sequence = new AtomicLong();
  private final IdempotencyKey recorded = IdempotencyKey.of("recorded-key");
  private byte[] result;
  private Once plain;
  private Once encrypted;

  @Setup(Level.Iteration)
  public void setUp() {
    result = new byte[resultBytes];
    java.util.Arrays.fill(result, (byte) 'x');
    ExecutionPolicy noHeartbeat = ExecutionPolicy.builder().heartbeat(false).build();
    Keyring keys = Keyring.builder().active("k1", new byte[32]).build();
    plain =
        Once.builder(InMemoryStore.builder().maxRecords(50_000_000).build())
            .defaults(noHeartbeat)
            .build();
    encrypted =
        Once.builder(
                EncryptingStore.of(InMemoryStore.builder().maxRecords(50_000_000).build(), keys))
            .defaults(noHeartbeat)
            .build();
    plain.execute(scope, recorded, fingerprint, ResultCodec.bytes(), ctx -> result);
    encrypted.execute(scope, recorded, fingerprint, ResultCodec.bytes(), ctx -> result);
  }

  @TearDown(Level.Iteration)
  public void tearDown() {
    plain.close();
    encrypted.close();
  }

  @Benchmark
  public ExecutionResult<byte[]> newKeyPlain() {
    return plain.execute(
        scope,
        IdempotencyKey.of("k-" + sequence.incrementAndGet()),
        fingerprint,
        ResultCodec.bytes(),
        ctx -> result);
  }

  @Benchmark
  public ExecutionResult<byte[]> newKeyEncrypted() {
    return encrypted.execute(
        scope,
        IdempotencyKey.of("k-" + sequence.incrementAndGet()),
        fingerprint,
        ResultCodec.bytes(),
        ctx -> result);
  }

  @Benchmark
  public ExecutionResult<byte[]> replayPlain() {
    return plain.execute(scope, recorded, fingerprint, ResultCodec.bytes(), ctx -> result);
  }

  @Benchmark
  public ExecutionResult<byte[]> replayEncrypted() {
    return encrypted.execute(scope, recorded, fingerprint, ResultCodec.bytes(), ctx -> result);
  }
}

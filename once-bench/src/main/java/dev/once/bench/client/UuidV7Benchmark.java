package dev.once.bench.client;

import dev.once.client.UuidV7;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of a new idempotency key: {@link UuidV7#next()} (one compare-and-set on a shared
 * counter, 62 bits from {@code ThreadLocalRandom}) against the JDK's {@link UUID#randomUUID()} (122
 * bits from a shared {@code SecureRandom}), on one thread and on two threads sharing each
 * generator. The {@code ...Key} variants add the text form the client sends.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class UuidV7Benchmark {

  @Benchmark
  @Threads(1)
  public UUID uuidV7() {
    return UuidV7.next();
  }

  @Benchmark
  @Threads(1)
  public UUID randomUuid() {
    return UUID.randomUUID();
  }

  @Benchmark
  @Threads(1)
  public String uuidV7Key() {
    return UuidV7.next().toString();
  }

  @Benchmark
  @Threads(1)
  public String randomUuidKey() {
    return UUID.randomUUID().toString();
  }

  @Benchmark
  @Threads(2)
  public UUID uuidV7TwoThreads() {
    return UuidV7.next();
  }

  @Benchmark
  @Threads(2)
  public UUID randomUuidTwoThreads() {
    return UUID.randomUUID();
  }
}

package dev.once.bench.redis;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * JMH: the Redis store's claim and completion against the floor of two bare {@code EVALSHA}s (see
 * {@link RedisFixture}), at 1 and at 50 concurrent callers, in one run. On a quiet machine this is
 * the reference; on a shared one, {@link RedisStoreOverhead} interleaves the two so that load from
 * elsewhere hits both alike. Redis at {@code -Donce.bench.redis} (default {@value
 * RedisFixture#DEFAULT_URI}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RedisStoreBenchmark {

  /** The fixture, shared by every caller. */
  @State(Scope.Benchmark)
  public static class Redis {
    RedisFixture fixture;

    @Setup(Level.Trial)
    public void connect() {
      fixture = new RedisFixture(System.getProperty("once.bench.redis", RedisFixture.DEFAULT_URI));
    }

    @TearDown(Level.Trial)
    public void close() {
      fixture.close();
    }
  }

  @Benchmark
  @Threads(1)
  public boolean claimAndComplete_1caller(Redis redis) {
    return redis.fixture.claimAndComplete();
  }

  @Benchmark
  @Threads(50)
  public boolean claimAndComplete_50callers(Redis redis) {
    return redis.fixture.claimAndComplete();
  }

  @Benchmark
  @Threads(1)
  public long floorTwoEvalsha_1caller(Redis redis) {
    return redis.fixture.floor();
  }

  @Benchmark
  @Threads(50)
  public long floorTwoEvalsha_50callers(Redis redis) {
    return redis.fixture.floor();
  }
}

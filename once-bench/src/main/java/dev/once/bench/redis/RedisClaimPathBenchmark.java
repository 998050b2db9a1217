package dev.once.bench.redis;

import dev.once.store.ClaimResult;
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
 * JMH: the Redis store's blocking claim of a new key against its asynchronous claim awaited by the
 * caller, for an A/B across the change that made each blocking call its asynchronous one awaited:
 * before it, the pair compares the two implementations; after it, both sides run the same code and
 * should cost the same as the awaited side did before. What differs is where the reply is decoded
 * (Lettuce's event loop instead of the caller's thread) and one more stage per call. One caller by
 * default; {@code -t 50} for the contended case. Redis at {@code -Donce.bench.redis} (default
 * {@value RedisFixture#DEFAULT_URI}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(1)
public class RedisClaimPathBenchmark {

  @Benchmark
  public ClaimResult claimBlocking(RedisStoreBenchmark.Redis redis) {
    return redis.fixture.claim();
  }

  @Benchmark
  public ClaimResult claimAsyncAwaited(RedisStoreBenchmark.Redis redis) {
    return redis.fixture.claimAsyncAwaited();
  }
}

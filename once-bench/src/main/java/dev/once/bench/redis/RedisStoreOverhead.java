package dev.once.bench.redis;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/**
 * The Redis store's overhead over the floor (see {@link RedisFixture}), measured in interleaved
 * rounds: floor, store, store, floor, floor, store… each round a fixed time with N callers, so that
 * load from elsewhere on a shared machine falls on both sides alike. Reports, per caller count, the
 * median over rounds of the mean time per operation and the ratio of the medians.
 *
 * <pre>
 * java -cp ... dev.once.bench.redis.RedisStoreOverhead [uri] [rounds] [roundMillis] [callers...]
 * </pre>
 *
 * Defaults: {@value RedisFixture#DEFAULT_URI}, 20 rounds, 1000 ms, callers 1 and 50.
 */
public final class RedisStoreOverhead {

  private RedisStoreOverhead() {}

  public static void main(String[] args) throws InterruptedException {
    String uri = args.length > 0 ? args[0] : RedisFixture.DEFAULT_URI;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    long roundMillis = args.length > 2 ? Long.parseLong(args[2]) : 1000;
    int[] callerCounts =
        args.length > 3
            ? Arrays.stream(args, 3, args.length).mapToInt(Integer::parseInt).toArray()
            : new int[] {1, 50};
    try (RedisFixture fixture = new RedisFixture(uri)) {
      BooleanSupplier store = fixture::claimAndComplete;
      BooleanSupplier floor = () -> fixture.floor() == 1;
      System.out.printf(
          "Redis %s, %d rounds of %d ms per side, interleaved%n", uri, rounds, roundMillis);
      System.out.println(
          "callers | floor: 2 x EVALSHA (us/op) | store: claim+complete (us/op) | ratio | store ops/s");
      for (int callers : callerCounts) {
        run(floor, callers, 2000);
        run(store, callers, 2000);
        double[] floorMicros = new double[rounds];
        double[] storeMicros = new double[rounds];
        double[] storeRate = new double[rounds];
        for (int round = 0; round < rounds; round++) {
          boolean floorFirst = (round % 2) == 0;
          Result a = run(floorFirst ? floor : store, callers, roundMillis);
          Result b = run(floorFirst ? store : floor, callers, roundMillis);
          Result f = floorFirst ? a : b;
          Result s = floorFirst ? b : a;
          floorMicros[round] = f.microsPerOp();
          storeMicros[round] = s.microsPerOp();
          storeRate[round] = s.opsPerSecond();
        }
        double floorMedian = median(floorMicros);
        double storeMedian = median(storeMicros);
        System.out.printf(
            Locale.ROOT,
            "%7d | %26.1f | %29.1f | %5.3f | %11.0f%n",
            callers,
            floorMedian,
            storeMedian,
            storeMedian / floorMedian,
            median(storeRate));
      }
    }
  }

  private record Result(long operations, long nanos, int callers) {
    double microsPerOp() {
      return operations == 0 ? Double.NaN : nanos / 1000.0 * callers / operations;
    }

    double opsPerSecond() {
      return operations * 1e9 / nanos;
    }
  }

  /**
   * Runs {@code operation} on {@code callers} threads for about {@code millis} and counts
   * completions.
   */
  private static Result run(BooleanSupplier operation, int callers, long millis)
      throws InterruptedException {
    LongAdder done = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>(callers);
    for (int i = 0; i < callers; i++) {
      Thread t =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  return;
                }
                while (!stop.get()) {
                  if (!operation.getAsBoolean()) {
                    throw new IllegalStateException("an operation did not succeed");
                  }
                  done.increment();
                }
              },
              "bench-caller-" + i);
      t.start();
      threads.add(t);
    }
    long begin = System.nanoTime();
    start.countDown();
    Thread.sleep(millis);
    stop.set(true);
    for (Thread t : threads) {
      t.join(10_000);
    }
    return new Result(done.sum(), System.nanoTime() - begin, callers);
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
}

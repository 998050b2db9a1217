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
 * The Redis store's overhead over the floor and over a bare script making the same writes (see
 * {@link RedisFixture}), measured in interleaved rounds, each starting with another side and each a
 * fixed time with N callers, so that load from elsewhere on a shared machine falls on every side
 * alike. Reports, per caller count, the median over rounds of the mean time per operation and the
 * ratios of the medians.
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
      List<BooleanSupplier> sides =
          List.of(
              () -> fixture.floor() == 1,
              () -> fixture.sameWrites() == 1,
              fixture::claimAndComplete);
      System.out.printf(
          "Redis %s, %d rounds of %d ms per side, interleaved%n", uri, rounds, roundMillis);
      System.out.println(
          "callers | floor: 2 x EVALSHA (us/op) | same writes (us/op) | store: claim+complete"
              + " (us/op) | store/same writes | store/floor | store ops/s");
      for (int callers : callerCounts) {
        for (BooleanSupplier side : sides) {
          run(side, callers, 2000);
        }
        double[][] micros = new double[sides.size()][rounds];
        double[] storeRate = new double[rounds];
        for (int round = 0; round < rounds; round++) {
          // Each round starts with another side, so a burst of outside load is shared out.
          for (int i = 0; i < sides.size(); i++) {
            int side = (round + i) % sides.size();
            Result r = run(sides.get(side), callers, roundMillis);
            micros[side][round] = r.microsPerOp();
            if (side == 2) {
              storeRate[round] = r.opsPerSecond();
            }
          }
        }
        double floor = median(micros[0]);
        double writes = median(micros[1]);
        double store = median(micros[2]);
        System.out.printf(
            Locale.ROOT,
            "%7d | %26.1f | %19.1f | %29.1f | %17.3f | %11.3f | %11.0f%n",
            callers,
            floor,
            writes,
            store,
            store / writes,
            store / floor,
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

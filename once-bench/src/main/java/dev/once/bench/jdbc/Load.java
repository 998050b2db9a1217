package dev.once.bench.jdbc;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/** Runs an operation on N threads for a fixed time, recording every call's latency. */
final class Load {

  /** One operation; {@code n} is unique across threads, for unique keys. */
  @FunctionalInterface
  interface Op {
    void run(long n) throws Exception;
  }

  private static final AtomicLong SEQUENCE = new AtomicLong();

  private Load() {}

  static Latencies run(int threads, Duration duration, Op op) throws InterruptedException {
    long[][] perThread = new long[threads][];
    int[] counts = new int[threads];
    CountDownLatch start = new CountDownLatch(1);
    Thread[] workers = new Thread[threads];
    long[] window = new long[2];
    for (int t = 0; t < threads; t++) {
      int index = t;
      workers[t] =
          new Thread(
              () -> {
                long[] samples = new long[1 << 16];
                int n = 0;
                try {
                  start.await();
                  long end = System.nanoTime() + duration.toNanos();
                  while (true) {
                    long begin = System.nanoTime();
                    if (begin >= end) {
                      break;
                    }
                    op.run(SEQUENCE.incrementAndGet());
                    if (n == samples.length) {
                      samples = java.util.Arrays.copyOf(samples, n * 2);
                    }
                    samples[n++] = System.nanoTime() - begin;
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
                perThread[index] = samples;
                counts[index] = n;
              },
              "bench-" + t);
      workers[t].start();
    }
    window[0] = System.nanoTime();
    start.countDown();
    for (Thread w : workers) {
      w.join();
    }
    window[1] = System.nanoTime();
    int total = 0;
    for (int c : counts) {
      total += c;
    }
    long[] all = new long[total];
    int at = 0;
    for (int t = 0; t < threads; t++) {
      System.arraycopy(perThread[t], 0, all, at, counts[t]);
      at += counts[t];
    }
    return new Latencies(all, (window[1] - window[0]) / 1e9);
  }
}

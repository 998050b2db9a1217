package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class AccessLinesTest {

  /** Everything written, and how many writes it took. */
  static class Recorded extends OutputStream {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final AtomicInteger writes = new AtomicInteger();

    @Override
    public void write(int b) {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) {
      writes.incrementAndGet();
      bytes.write(b, off, len);
    }

    synchronized List<String> lines() {
      String text = bytes.toString(StandardCharsets.UTF_8);
      return text.isEmpty() ? List.of() : List.of(text.split("\n", -1)).subList(0, count(text));
    }

    private static int count(String text) {
      return (int) text.chars().filter(c -> c == '\n').count();
    }
  }

  /** What a test's output does with each write. */
  interface Chunk {
    void write(byte[] b, int off, int len) throws IOException;
  }

  /** An output whose every write, of one byte or many, goes to {@code chunk}. */
  static OutputStream output(Chunk chunk) {
    return new OutputStream() {
      @Override
      public void write(int b) throws IOException {
        chunk.write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        chunk.write(b, off, len);
      }
    };
  }

  /** A stuck write, bounded so that a failing test still ends. */
  static void awaitAtMost30s(CountDownLatch release) {
    try {
      release.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static AccessLines started(Supplier<OutputStream> out, Duration flushEvery) {
    AccessLines lines = new AccessLines(out, flushEvery);
    lines.start();
    return lines;
  }

  @Test
  void everyLineIsWrittenWholeAndInOrderOnceClosed() throws Exception {
    Recorded out = new Recorded();
    AccessLines lines = started(() -> out, Duration.ofMillis(20));
    int threads = 4;
    int each = 3_000;
    List<CompletableFuture<Void>> adders = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      adders.add(
          CompletableFuture.runAsync(
              () -> {
                for (int i = 0; i < each; i++) {
                  lines.add("thread=" + thread + " line=" + i + " path=/ü");
                }
              }));
    }
    CompletableFuture.allOf(adders.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    lines.close();

    List<String> written = out.lines();
    assertThat(written).hasSize(threads * each);
    Map<Integer, Integer> next = new HashMap<>();
    for (String line : written) {
      assertThat(line).matches("thread=\\d line=\\d+ path=/ü");
      int thread = Integer.parseInt(line.substring(7, 8));
      int n = Integer.parseInt(line.substring(14, line.indexOf(' ', 14)));
      assertThat(n)
          .as("thread %d's lines in order", thread)
          .isEqualTo(next.getOrDefault(thread, 0));
      next.put(thread, n + 1);
    }
    assertThat(lines.writing()).isFalse();
  }

  @Test
  void linesGoOutInBatchesNotAWriteEach() {
    Recorded out = new Recorded();
    AccessLines lines = started(() -> out, Duration.ofMillis(100));
    for (int i = 0; i < 5_000; i++) {
      lines.add("method=POST path=/payments status=201 replayed=false duration_ms=0.250 n=" + i);
    }
    lines.close();

    assertThat(out.lines()).hasSize(5_000);
    // ~400 KB: a write per 32 KiB gathered, or per 100 ms, never one per line.
    assertThat(out.writes.get()).isBetween(1, 100);
  }

  @Test
  void aLineGoesOutWithinTheIntervalWithoutWaitingForMore() throws Exception {
    Recorded out = new Recorded();
    AccessLines lines = started(() -> out, Duration.ofMillis(50));
    try {
      lines.add("the only line");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (out.lines().isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(out.lines()).containsExactly("the only line");
    } finally {
      lines.close();
    }
  }

  @Test
  void aStuckOutputNeverHoldsARequestAndLinesPastTheBoundAreDroppedAndCounted() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch stuck = new CountDownLatch(1);
    Recorded written = new Recorded();
    OutputStream out =
        output(
            (b, off, len) -> {
              stuck.countDown();
              awaitAtMost30s(release);
              written.write(b, off, len);
            });
    String line = "x".repeat(99);
    int added = 2 * AccessLines.MOST_PENDING_CHARS / (line.length() + 1);
    String output;
    AccessLines lines;
    try (RecordingOutput recording = new RecordingOutput()) {
      lines = started(() -> out, Duration.ofMillis(10));
      try {
        lines.add(line);
        assertThat(stuck.await(10, TimeUnit.SECONDS)).as("the writer is stuck in a write").isTrue();
        // Twice what may wait, added while the output takes nothing: no add may wait for it.
        CompletableFuture.runAsync(
                () -> {
                  for (int i = 1; i < added; i++) {
                    lines.add(line);
                  }
                })
            .get(10, TimeUnit.SECONDS);
      } finally {
        release.countDown();
        lines.close();
      }
      output = recording.text();
    }

    int kept = written.lines().size();
    assertThat(kept).isLessThan(added).isGreaterThan(AccessLines.MOST_PENDING_CHARS / 200);
    assertThat(output).contains((added - kept) + " access lines dropped");
    assertThat(lines.droppedTotal()).isEqualTo(added - kept);
  }

  @Test
  void aWriteThatThrowsLosesItsBatchAloneAndTheWriterGoesOn() throws Exception {
    Recorded out = new Recorded();
    AtomicInteger attempts = new AtomicInteger();
    OutputStream failingTwice =
        output(
            (b, off, len) -> {
              switch (attempts.incrementAndGet()) {
                case 1 -> throw new IllegalStateException("a defect in the output");
                case 2 -> throw new OutOfMemoryError("no room for the batch");
                default -> out.write(b, off, len);
              }
            });
    AccessLines lines = started(() -> failingTwice, Duration.ofMillis(10));
    try {
      for (String each : List.of("first", "second", "third")) {
        int before = attempts.get();
        lines.add(each);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (attempts.get() == before && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
      }
      assertThat(lines.writing()).isTrue();
    } finally {
      lines.close();
    }
    assertThat(out.lines()).containsExactly("third");
  }

  @Test
  void closingWithAStuckOutputReturnsAndLaterLinesAreDropped() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    OutputStream stuck = output((b, off, len) -> awaitAtMost30s(release));
    AccessLines lines = started(() -> stuck, Duration.ofMillis(10));
    try {
      lines.add("never taken");
      CompletableFuture.runAsync(lines::close).get(10, TimeUnit.SECONDS);
      lines.add("after close"); // dropped, without an error
      assertThat(lines.droppedTotal()).isEqualTo(1);
    } finally {
      release.countDown();
    }
  }
}

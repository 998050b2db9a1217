package dev.once.tck;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM on the test classpath, whose output lines the test reads, and which the test kills
 * with SIGKILL ({@link Process#destroyForcibly()} on Linux): the crash a power cut or the OOM
 * killer would cause, with no shutdown hook, no finally block, no commit. Shared by every module's
 * crash tests.
 */
public final class ChildJvm implements AutoCloseable {

  private final Process process;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

  private ChildJvm(Process process) {
    this.process = process;
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  lines.add(line);
                }
              } catch (IOException e) {
                // The child was killed mid-line; what was read is what counts.
              }
            },
            "child-jvm-reader");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts {@code main} in a new JVM (128 MiB heap) on this JVM's class path. */
  public static ChildJvm start(Class<?> main, String... args) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-cp",
                System.getProperty("java.class.path"),
                main.getName()));
    command.addAll(List.of(args));
    return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
  }

  /** The next line the child printed, or {@code null} after {@code seconds}. */
  public String nextLine(int seconds) throws InterruptedException {
    return lines.poll(seconds, TimeUnit.SECONDS);
  }

  /** Waits for a line equal to {@code expected}, failing with the child's output otherwise. */
  public void awaitLine(String expected, int seconds) throws InterruptedException {
    List<String> seen = new ArrayList<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      String line = lines.poll(100, TimeUnit.MILLISECONDS);
      if (expected.equals(line)) {
        return;
      }
      if (line != null) {
        seen.add(line);
      }
    }
    throw new AssertionError("child never printed " + expected + "; it printed " + seen);
  }

  /** SIGKILLs the child and waits until it is gone; returns every line it had printed. */
  public List<String> kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
    Thread.sleep(100);
    List<String> rest = new ArrayList<>();
    lines.drainTo(rest);
    return rest;
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      kill();
    }
  }
}

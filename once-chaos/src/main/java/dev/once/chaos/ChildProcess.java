package dev.once.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A server process the harness owns (a gateway or application JVM, a redis-server): started with a
 * fixed command, ready once a line of its output matches, killed with SIGKILL and started again on
 * demand. Its output goes to a log file. A shutdown hook kills it should the harness end first.
 */
final class ChildProcess implements AutoCloseable {

  private final String name;
  private final List<String> command;
  private final Pattern ready;
  private final Duration startTimeout;
  private final Path log;
  private final Thread cleanup;
  private volatile @Nullable Process process;
  private int starts;

  ChildProcess(String name, List<String> command, Pattern ready, Duration startTimeout, Path log) {
    this.name = name;
    this.command = List.copyOf(command);
    this.ready = ready;
    this.startTimeout = startTimeout;
    this.log = log;
    this.cleanup =
        new Thread(
            () -> {
              Process p = process;
              if (p != null) {
                p.destroyForcibly();
              }
            },
            name + "-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
  }

  /** {@code java} of this JVM, with a modest heap, on the harness's own class path. */
  static List<String> javaCommand(List<String> jvmOptions) {
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1"));
    command.addAll(jvmOptions);
    return command;
  }

  /**
   * Starts the process and waits until it prints its ready line; fails if it dies or takes too
   * long.
   */
  void start() {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException(name + " is already running");
    }
    starts++;
    CompletableFuture<Void> started = new CompletableFuture<>();
    try {
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name, e);
    }
    Process p = process;
    Thread reader = new Thread(() -> pump(p, started), name + "-output");
    reader.setDaemon(true);
    reader.start();
    try {
      started.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      p.destroyForcibly();
      throw new IllegalStateException(
          name + " did not start within " + startTimeout + "; see " + log, e);
    }
  }

  private void pump(Process p, CompletableFuture<Void> started) {
    try (BufferedReader in =
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        PrintWriter out =
            new PrintWriter(
                Files.newBufferedWriter(
                    log,
                    StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND),
                true)) {
      out.println("---- start " + starts + ": " + String.join(" ", command));
      for (String line; (line = in.readLine()) != null; ) {
        out.println(line);
        if (!started.isDone() && ready.matcher(line).find()) {
          started.complete(null);
        }
      }
    } catch (IOException e) {
      // the process died
    }
    started.completeExceptionally(new IllegalStateException(name + " exited before it was ready"));
  }

  /** SIGKILL: a crash. Returns once the process is gone. */
  void kill() {
    Process p = process;
    if (p == null) {
      return;
    }
    p.destroyForcibly();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException(name + " did not die within 30 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGKILL, then the same command again. */
  void killAndRestart() {
    kill();
    start();
  }

  Path log() {
    return log;
  }

  @Override
  public void close() {
    Process p = process;
    if (p != null && p.isAlive()) {
      p.destroy();
      try {
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
          kill();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
    try {
      Runtime.getRuntime().removeShutdownHook(cleanup);
    } catch (IllegalStateException e) {
      // shutting down already
    }
  }
}

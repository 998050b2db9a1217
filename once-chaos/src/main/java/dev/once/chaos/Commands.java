package dev.once.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/** Running short external commands, bounded in time, and the small chores around them. */
final class Commands {

  private Commands() {}

  /**
   * Runs {@code command} for at most {@code timeout}; returns its output, or throws if it fails.
   */
  static String run(List<String> command, Duration timeout) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      // Read on a separate thread so a command that never closes its output cannot outlive the
      // timeout.
      StringBuilder output = new StringBuilder();
      Thread reader =
          new Thread(
              () -> {
                try (InputStream in = p.getInputStream()) {
                  output.append(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                } catch (IOException e) {
                  // The process was killed.
                }
              },
              "command-output");
      reader.setDaemon(true);
      reader.start();
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(
            String.join(" ", command) + " did not finish within " + timeout);
      }
      reader.join(5_000);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command) + " exited with " + p.exitValue() + ": " + output);
      }
      return output.toString();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command.get(0), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command.get(0), e);
    }
  }

  /** Whether the process runs as root (PostgreSQL refuses to). */
  static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  /** {@code command} as the given OS user when this process is root, else as it stands. */
  static List<String> as(String user, List<String> command) {
    if (!root()) {
      return command;
    }
    List<String> wrapped = new ArrayList<>(List.of("runuser", "-u", user, "--"));
    wrapped.addAll(command);
    return wrapped;
  }

  /** A free loopback port, away from the usual services' ports. */
  static int freePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(30_000, 40_000);
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(false);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return port;
      } catch (IOException e) {
        // taken; try another
      }
    }
    throw new IllegalStateException("no free loopback port found in 200 attempts");
  }

  /** Sends SIGKILL to {@code pid}: a crash, nothing flushed that was not already. */
  static void kill9(long pid) {
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
  }

  /**
   * Deletes a directory tree; what cannot be deleted is left (a temp dir left behind is harmless).
   */
  static void deleteTree(@Nullable Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // best effort
    }
  }

  static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}

package dev.once.store.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
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

/**
 * A {@code redis-server} a test owns: its own loopback port and its own temporary directory, never
 * saving snapshots, killed with {@code SIGKILL} and restartable on the same port and directory (so
 * an append-only file, if enabled, is replayed). Every wait is bounded.
 */
final class RedisServerProcess implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

  private final int port;
  private final Path dir;
  private final List<String> extraArgs;
  private Process process;

  private RedisServerProcess(int port, Path dir, List<String> extraArgs) {
    this.port = port;
    this.dir = dir;
    this.extraArgs = extraArgs;
  }

  /** Whether {@code redis-server} and {@code redis-cli} can be run here. */
  static boolean binariesAvailable() {
    return runs("redis-server", "--version") && runs("redis-cli", "--version");
  }

  /**
   * Starts a server on a free loopback port with these extra options, e.g. {@code --appendonly
   * yes}.
   */
  static RedisServerProcess start(String... extraArgs) {
    return start(freePort(), extraArgs);
  }

  static RedisServerProcess start(int port, String... extraArgs) {
    try {
      RedisServerProcess server =
          new RedisServerProcess(
              port, Files.createTempDirectory("once-redis-" + port + "-"), List.of(extraArgs));
      server.startProcess();
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  int port() {
    return port;
  }

  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** Kills the server with SIGKILL, as a crash would, and waits until it is gone. */
  void kill() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException(
            "redis-server on port " + port + " did not die within 10 s of SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    process = null;
  }

  /** Starts the server again on the same port and directory. */
  void restart() {
    kill();
    startProcess();
  }

  /** Runs {@code redis-cli} against this server and returns what it printed. */
  String cli(String... args) {
    List<String> command =
        new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
    command.addAll(List.of(args));
    return run(command);
  }

  /**
   * How many scripts the server has run since it started ({@code EVALSHA} and {@code EVAL} calls,
   * from {@code INFO commandstats}): a count of round trips that nothing else on a test's own
   * server adds to.
   */
  long scriptCalls() {
    long calls = 0;
    for (String line : cli("info", "commandstats").lines().toList()) {
      if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
        int from = line.indexOf("calls=") + "calls=".length();
        calls += Long.parseLong(line.substring(from, line.indexOf(',', from)));
      }
    }
    return calls;
  }

  /** Runs a command for at most 60 s and returns its output, failing if it fails. */
  static String run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      byte[] output;
      try (InputStream in = p.getInputStream()) {
        output = in.readAllBytes();
      }
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(command + " did not finish within 60 s");
      }
      String text = new String(output, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(command + " exited with " + p.exitValue() + ": " + text);
      }
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** Kills the server and deletes its directory. */
  @Override
  public void close() {
    kill();
    deleteRecursively(dir);
  }

  private void startProcess() {
    List<String> command =
        new ArrayList<>(
            List.of(
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--save",
                "",
                "--dir",
                dir.toString(),
                "--daemonize",
                "no",
                "--protected-mode",
                "yes",
                "--logfile",
                dir.resolve("redis.log").toString()));
    command.addAll(extraArgs);
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("stdout.log").toFile())
              .start();
      // Should the test JVM die before its @After methods run, the server must not outlive it.
      Process started = process;
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(started::destroyForcibly, "once-test-redis-" + port + "-kill"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start redis-server", e);
    }
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "redis-server on port "
                + port
                + " exited with "
                + process.exitValue()
                + "; see "
                + dir.resolve("redis.log"));
      }
      if (pings(port)) {
        return;
      }
      sleep(50);
    }
    process.destroyForcibly();
    throw new IllegalStateException(
        "redis-server on port " + port + " did not answer PING within " + START_TIMEOUT);
  }

  /** Whether something on the loopback port answers a RESP {@code PING} with {@code +PONG}. */
  static boolean pings(int port) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] reply = new byte[7];
      int n = in.readNBytes(reply, 0, reply.length);
      return new String(reply, 0, n, StandardCharsets.US_ASCII).startsWith("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * A loopback port that is free, and whose cluster bus port (port + 10000) is free too, from a
   * range away from the usual services.
   */
  static int freePort() {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(20_000, 30_000);
      if (free(port) && free(port + 10_000)) {
        return port;
      }
    }
    throw new IllegalStateException("no free loopback port pair found");
  }

  private static boolean free(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  static boolean runs(String... command) {
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // A leftover temporary directory is not worth failing a test for.
    }
  }
}

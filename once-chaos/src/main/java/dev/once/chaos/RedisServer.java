package dev.once.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A {@code redis-server} the harness owns, on its own loopback port and directory, with the
 * durability the Redis store documents for exactly-once: {@code appendonly yes}, {@code appendfsync
 * always}. A crash is SIGKILL; the restart replays the append-only file.
 */
final class RedisServer implements AutoCloseable {

  private final Path dir;
  private final int port;
  private final ChildProcess process;

  private RedisServer(Path dir, int port) {
    this.dir = dir;
    this.port = port;
    this.process =
        new ChildProcess(
            "redis-" + port,
            List.of(
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--dir",
                dir.toString(),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--daemonize",
                "no",
                "--protected-mode",
                "yes"),
            Pattern.compile("Ready to accept connections"),
            Duration.ofSeconds(60),
            dir.resolve("redis.log"));
  }

  /** Whether {@code redis-server} runs here. */
  static boolean available() {
    try {
      Commands.run(List.of("redis-server", "--version"), Duration.ofSeconds(30));
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  static RedisServer start() {
    try {
      RedisServer server =
          new RedisServer(Files.createTempDirectory("once-chaos-redis-"), Commands.freePort());
      try {
        server.process.start();
      } catch (RuntimeException e) {
        server.close();
        throw e;
      }
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  String url() {
    return "redis://127.0.0.1:" + port;
  }

  /** SIGKILL and start again on the same directory. */
  void crashAndRestart() {
    process.killAndRestart();
  }

  @Override
  public void close() {
    process.kill();
    process.close();
    Commands.deleteTree(dir);
  }
}

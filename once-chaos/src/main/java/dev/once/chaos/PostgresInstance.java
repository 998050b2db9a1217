package dev.once.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * One PostgreSQL server the harness owns: a data directory and a loopback port. Every command runs
 * as the {@code postgres} OS user when the harness runs as root (PostgreSQL refuses root), and is
 * bounded in time.
 */
final class PostgresInstance {

  static final Path BIN =
      Path.of(System.getProperty("once.chaos.pgBin", "/usr/lib/postgresql/15/bin"));
  static final String OS_USER = "postgres";
  private static final Duration COMMAND_TIMEOUT = Duration.ofMinutes(3);

  private final String name;
  private final Path dataDir;
  private final int port;

  PostgresInstance(String name, Path dataDir, int port) {
    this.name = name;
    this.dataDir = dataDir;
    this.port = port;
  }

  /** Whether the binaries are here, and (as root) the OS user they must run as exists. */
  static boolean available() {
    if (!Files.isExecutable(BIN.resolve("initdb"))
        || !Files.isExecutable(BIN.resolve("pg_basebackup"))) {
      return false;
    }
    if (!Commands.root()) {
      return true;
    }
    try {
      Commands.run(List.of("id", OS_USER), Duration.ofSeconds(30));
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  String name() {
    return name;
  }

  int port() {
    return port;
  }

  Path dataDir() {
    return dataDir;
  }

  /** {@code jdbc:postgresql://127.0.0.1:port/postgres}, with short socket and connect timeouts. */
  String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:"
        + port
        + "/postgres?connectTimeout=5&socketTimeout=30&tcpKeepAlive=true";
  }

  /** A fresh cluster: trust authentication on loopback, replication allowed, fsync on. */
  void initdb() {
    pg(
        List.of(
            bin("initdb"),
            "-D",
            dataDir.toString(),
            "-U",
            OS_USER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C"));
  }

  /**
   * A replica of {@code primary}: a base backup with {@code -R} (standby.signal and
   * primary_conninfo).
   */
  void baseBackupFrom(PostgresInstance primary) {
    pg(
        List.of(
            bin("pg_basebackup"),
            "-h",
            "127.0.0.1",
            "-p",
            Integer.toString(primary.port),
            "-U",
            OS_USER,
            "-D",
            dataDir.toString(),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast"));
  }

  /** Appends settings to {@code postgresql.conf}; the last occurrence of a setting wins. */
  void configure(List<String> lines) {
    try {
      Files.writeString(
          dataDir.resolve("postgresql.conf"),
          "\n" + String.join("\n", lines) + "\n",
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The settings every instance gets: its port, loopback only, a small footprint, durable commits.
   */
  List<String> baseSettings() {
    return List.of(
        "port = " + port,
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = '" + dataDir + "'",
        "fsync = on",
        "full_page_writes = on",
        "shared_buffers = 32MB",
        "max_connections = 60",
        "wal_level = replica",
        "max_wal_senders = 4",
        "wal_keep_size = 256MB",
        "hot_standby = on",
        "logging_collector = off");
  }

  /** Starts the server and waits until it accepts connections. */
  void start() {
    pg(
        List.of(
            bin("pg_ctl"),
            "-D",
            dataDir.toString(),
            "-l",
            dataDir.resolve("server.log").toString(),
            "-w",
            "-t",
            "120",
            "start"));
  }

  /** Promotes a standby to a primary and waits until it accepts writes. */
  void promote() {
    pg(List.of(bin("pg_ctl"), "-D", dataDir.toString(), "-w", "-t", "120", "promote"));
  }

  /** Stops the server quickly (fast shutdown); a server that is not running is left alone. */
  void stop() {
    if (postmasterPid() > 0) {
      try {
        pg(
            List.of(
                bin("pg_ctl"), "-D", dataDir.toString(), "-m", "fast", "-w", "-t", "60", "stop"));
      } catch (RuntimeException e) {
        kill9();
      }
    }
  }

  /**
   * SIGKILLs the postmaster and then every process it had started, as a power cut or a host crash
   * would end them: nothing more is sent to a client or to the replica. Returns once all are gone.
   */
  void kill9() {
    long pid = postmasterPid();
    if (pid <= 0) {
      return;
    }
    ProcessHandle.of(pid)
        .ifPresent(
            postmaster -> {
              List<ProcessHandle> children = postmaster.children().toList();
              postmaster.destroyForcibly();
              children.forEach(ProcessHandle::destroyForcibly);
              waitGone(postmaster);
              children.forEach(PostgresInstance::waitGone);
            });
    try {
      // A postmaster killed with SIGKILL leaves its pid file; the next start must not trust it.
      Files.deleteIfExists(dataDir.resolve("postmaster.pid"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Crash and restart: SIGKILL, then start again on the same data directory (crash recovery runs).
   */
  void crashAndRestart() {
    kill9();
    start();
  }

  /** The postmaster's pid from {@code postmaster.pid}, or -1 if it is not running. */
  long postmasterPid() {
    Path pidFile = dataDir.resolve("postmaster.pid");
    try {
      if (!Files.exists(pidFile)) {
        return -1;
      }
      long pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
      return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) ? pid : -1;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** A new connection (autocommit), failing within seconds if the server is down. */
  Connection connect() throws SQLException {
    Properties props = new Properties();
    props.setProperty("user", OS_USER);
    return DriverManager.getConnection(jdbcUrl(), props);
  }

  private static void waitGone(ProcessHandle p) {
    try {
      p.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(
          "process " + p.pid() + " did not die within 30 s of SIGKILL", e);
    }
  }

  private static String bin(String tool) {
    return BIN.resolve(tool).toString();
  }

  private static void pg(List<String> command) {
    Commands.run(Commands.as(OS_USER, new ArrayList<>(command)), COMMAND_TIMEOUT);
  }

  @Override
  public String toString() {
    return name + "@127.0.0.1:" + port;
  }
}

package dev.once.chaos;

import dev.once.internal.Arguments;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL primary, optionally with one streaming replica, in a temporary directory on free
 * loopback ports, owned by the harness: it can SIGKILL the primary, promote the replica, or crash
 * and restart a server. Runs the binaries of {@code /usr/lib/postgresql/15/bin} (system property
 * {@code once.chaos.pgBin}) as the {@code postgres} OS user when the harness runs as root.
 *
 * <pre>{@code
 * try (PostgresCluster cluster = PostgresCluster.withReplica(Replication.SYNC_REMOTE_APPLY)) {
 *   ... load against cluster.primaryJdbcUrl() ...
 *   cluster.killPrimary();
 *   cluster.promoteReplica();
 *   ... audit against cluster.replicaJdbcUrl() ...
 * }
 * }</pre>
 *
 * <p>{@link #close()} stops every server and deletes the directory; a shutdown hook does the same
 * should the JVM end first.
 */
public final class PostgresCluster implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(PostgresCluster.class);

  private final Path dir;
  private final PostgresInstance primary;
  private final @Nullable PostgresInstance replica;
  private final Replication replication;
  private final Thread cleanup;

  private PostgresCluster(
      Path dir,
      PostgresInstance primary,
      @Nullable PostgresInstance replica,
      Replication replication) {
    this.dir = dir;
    this.primary = primary;
    this.replica = replica;
    this.replication = replication;
    this.cleanup = new Thread(this::destroy, "postgres-cluster-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
  }

  /**
   * Whether this machine can run a cluster: the binaries, and the {@code postgres} user when root.
   */
  public static boolean available() {
    return PostgresInstance.available();
  }

  /** A single server, no replica: a store the harness can crash and restart. */
  public static PostgresCluster single() {
    return create(Optional.empty());
  }

  /** A primary and a streaming replica, replicating as {@code replication} says. */
  public static PostgresCluster withReplica(Replication replication) {
    Arguments.present("replication", replication);
    return create(Optional.of(replication));
  }

  private static PostgresCluster create(Optional<Replication> replication) {
    Path dir = ownedTempDir();
    PostgresCluster cluster = null;
    try {
      PostgresInstance primary =
          new PostgresInstance("primary", dir.resolve("primary"), Commands.freePort());
      PostgresInstance replica =
          replication.isPresent()
              ? new PostgresInstance("replica", dir.resolve("replica"), Commands.freePort())
              : null;
      cluster = new PostgresCluster(dir, primary, replica, replication.orElse(Replication.ASYNC));
      primary.initdb();
      List<String> settings = new ArrayList<>(primary.baseSettings());
      if (replication.orElse(Replication.ASYNC) == Replication.SYNC_REMOTE_APPLY) {
        settings.add("synchronous_standby_names = '*'");
        settings.add("synchronous_commit = remote_apply");
      } else {
        settings.add("synchronous_commit = on");
      }
      primary.configure(settings);
      primary.start();
      if (replica != null) {
        replica.baseBackupFrom(primary);
        // The backup copied the primary's settings; the replica differs in port and socket
        // directory.
        replica.configure(
            List.of(
                "port = " + replica.port(),
                "unix_socket_directories = '" + replica.dataDir() + "'",
                "synchronous_standby_names = ''"));
        replica.start();
        cluster.awaitStreaming(Duration.ofSeconds(60));
      }
      log.info(
          "PostgreSQL {} started in {}{}",
          primary,
          dir,
          replica == null ? "" : ", replica " + replica + " (" + cluster.replication + ")");
      return cluster;
    } catch (RuntimeException e) {
      if (cluster != null) {
        cluster.close();
      } else {
        Commands.deleteTree(dir);
      }
      throw e;
    }
  }

  private static Path ownedTempDir() {
    try {
      Path dir = Files.createTempDirectory("once-chaos-pg-");
      if (Commands.root()) {
        Commands.run(
            List.of("chown", PostgresInstance.OS_USER + ":", dir.toString()),
            Duration.ofSeconds(30));
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Waits until the primary reports a streaming replica, so a failover has something to promote.
   */
  private void awaitStreaming(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      try (Connection c = primary.connect();
          Statement s = c.createStatement();
          ResultSet rs =
              s.executeQuery(
                  "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")) {
        if (rs.next() && rs.getInt(1) > 0) {
          return;
        }
      } catch (SQLException e) {
        // not yet
      }
      Commands.sleep(Duration.ofMillis(200));
    }
    throw new IllegalStateException("the replica did not start streaming within " + timeout);
  }

  public Replication replication() {
    return replication;
  }

  public int primaryPort() {
    return primary.port();
  }

  public String primaryJdbcUrl() {
    return primary.jdbcUrl();
  }

  /** The replica's JDBC URL; after {@link #promoteReplica()}, the new primary's. */
  public String replicaJdbcUrl() {
    return requireReplica().jdbcUrl();
  }

  /** The OS user and the database user every server trusts on loopback. */
  public String user() {
    return PostgresInstance.OS_USER;
  }

  /** SIGKILLs the primary's postmaster and its processes: a crash of the primary's host. */
  public void killPrimary() {
    primary.kill9();
  }

  /** Promotes the replica; returns once it accepts writes. */
  public void promoteReplica() {
    requireReplica().promote();
  }

  /** Crashes the primary (SIGKILL) and starts it again on the same data: a store restart. */
  public void crashAndRestartPrimary() {
    primary.crashAndRestart();
  }

  /** The primary's data directory, where its {@code server.log} is. */
  public Path primaryDataDir() {
    return primary.dataDir();
  }

  private PostgresInstance requireReplica() {
    if (replica == null) {
      throw new IllegalStateException("this cluster has no replica");
    }
    return replica;
  }

  private void destroy() {
    if (replica != null) {
      replica.kill9();
    }
    primary.kill9();
    Commands.deleteTree(dir);
  }

  /** Stops every server and deletes the directory. */
  @Override
  public void close() {
    if (replica != null) {
      replica.stop();
    }
    primary.stop();
    Commands.deleteTree(dir);
    try {
      Runtime.getRuntime().removeShutdownHook(cleanup);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down; the hook runs anyway
    }
  }
}

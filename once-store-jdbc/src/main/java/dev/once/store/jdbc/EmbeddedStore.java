package dev.once.store.jdbc;

import dev.once.internal.Arguments;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * A durable idempotency store in a local file, for a single node: the standalone gateway's default.
 *
 * <pre>{@code
 * EmbeddedStore store = EmbeddedStore.open(Path.of("/var/lib/once"));
 * }</pre>
 *
 * <p>It is SQLite in WAL mode, chosen over H2 by measurement ({@code docs/embedded-store.md}):
 * every completion the store has confirmed survives a {@code kill -9}, and with the default {@link
 * Durability#SURVIVES_POWER_LOSS} also a power cut. The store owns its one connection and opens the
 * file exclusively, so two processes can never share it; it creates its schema itself. Concurrent
 * operations share commits (a group commit: one disk sync for every operation that ran while the
 * previous sync was under way), and each returns only once its commit is durable. Waiters are woken
 * in-process ({@link #notifiesChanges()} is true), because this store is the only writer of its
 * file. For several nodes, use {@link PostgresStore} or {@link MariaDbStore}.
 */
public final class EmbeddedStore extends JdbcStore {

  /** The database file inside the data directory. */
  public static final String FILE_NAME = "once.db";

  /** How much a commit survives, traded against its cost. */
  public enum Durability {
    /**
     * Every commit is synced to disk ({@code synchronous=FULL}): survives power loss. The default.
     */
    SURVIVES_POWER_LOSS,
    /**
     * Commits reach the OS before returning, the WAL is synced at checkpoints ({@code
     * synchronous=NORMAL}): survives any process crash, but a power loss or OS crash may lose the
     * last commits. Many times faster on disks with slow syncs.
     */
    SURVIVES_PROCESS_CRASH
  }

  /**
   * The memory the finished records kept for replays may take, counted as their results' bytes and
   * a fixed cost per record.
   */
  static final long FINISHED_RECORDS_BYTES = 16L << 20;

  private final EmbeddedConnection connection;
  private final FinishedRecords finished;
  private final boolean answersOnWriter;

  private EmbeddedStore(
      Dialect dialect,
      EmbeddedConnection connection,
      int timeoutSeconds,
      Clock clock,
      boolean answersOnWriter) {
    super(dialect, connection, timeoutSeconds, new LocalChangeFeed());
    this.connection = connection;
    this.finished = new FinishedRecords(clock, FINISHED_RECORDS_BYTES);
    this.answersOnWriter = answersOnWriter;
  }

  /** Opens (creating if needed) the store in {@code dataDir} with every option at its default. */
  public static EmbeddedStore open(Path dataDir) {
    return builder(dataDir).build();
  }

  public static Builder builder(Path dataDir) {
    return new Builder(dataDir);
  }

  // A replay, or a read of a finished record, is answered from the records kept in memory where it
  // can be, without waiting for the writer; see FinishedRecords for why that is exact.

  @Override
  public ClaimResult claim(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    IdempotencyRecord kept = finished.get(request.id());
    return kept != null ? new ClaimResult.Existing(kept) : finished.keep(super.claim(request));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    Objects.requireNonNull(id, "id");
    IdempotencyRecord kept = finished.get(id);
    return kept != null ? Optional.of(kept) : finished.keep(super.get(id));
  }

  // The asynchronous calls go to the store's writer thread without a thread of the caller's
  // waiting for them; they go on on the caller's executor once their commit is durable, or on the
  // writer itself if the store was built to answer there (Builder#answersOnWriter).

  private Executor answers(Executor blocking) {
    return answersOnWriter ? Runnable::run : blocking;
  }

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    IdempotencyRecord kept = finished.get(request.id());
    if (kept != null) {
      return CompletableFuture.completedFuture(new ClaimResult.Existing(kept));
    }
    return operations
        .claimCall(request)
        .start(connection, answers(blocking))
        .thenApply(finished::keep);
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    IdempotencyRecord kept = finished.get(id);
    if (kept != null) {
      return CompletableFuture.completedFuture(Optional.of(kept));
    }
    return operations.getCall(id).start(connection, answers(blocking)).thenApply(finished::keep);
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return operations
        .finishCall(RecordState.COMPLETED, id, token, result, ttl)
        .start(connection, answers(blocking));
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return operations
        .finishCall(RecordState.FAILED_FINAL, id, token, result, ttl)
        .start(connection, answers(blocking));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return operations.releaseCall(id, token).start(connection, answers(blocking));
  }

  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return operations.endLeaseCall(id, token).start(connection, answers(blocking));
  }

  /** Closes the file; waiters are woken so that they re-read and see the store is closed. */
  @Override
  public void close() {
    finished.close();
    super.close();
    connection.close();
  }

  /** Options of an {@link EmbeddedStore}. */
  public static final class Builder extends JdbcStoreBuilder<Builder> {

    private final Path dataDir;
    private Durability durability = Durability.SURVIVES_POWER_LOSS;
    private Clock clock = Clock.systemUTC();
    private boolean answersOnWriter;

    private Builder(Path dataDir) {
      Arguments.present("dataDir", dataDir);
      if (Files.exists(dataDir) && !Files.isDirectory(dataDir)) {
        throw new IllegalArgumentException("dataDir must be a directory; was the file " + dataDir);
      }
      this.dataDir = dataDir;
    }

    /** How much a commit survives; default {@link Durability#SURVIVES_POWER_LOSS}. */
    public Builder durability(Durability durability) {
      this.durability = Arguments.present("durability", durability);
      return this;
    }

    /**
     * The store's clock for leases and expiry; default {@link Clock#systemUTC()}. A single node has
     * no skew to guard against, so its own clock is the store's clock.
     */
    public Builder clock(Clock clock) {
      this.clock = Arguments.present("clock", clock);
      return this;
    }

    /**
     * Whether the asynchronous calls ({@code claimAsync}, {@code completeAsync}, …) are answered on
     * the store's writer thread, as a store with an asynchronous client answers on its client's
     * thread; default false: each answer is handed to the executor the caller passed. On the
     * writer, what follows an answer runs without another thread being woken for it (for the
     * gateway, two fewer a request; docs/benchmarks.md), but the writer, and with it every caller's
     * next commit, waits while it runs. So only for callers whose continuations never block and
     * never call this store through its blocking API (an event loop's, handing each answer to its
     * own loop, as the gateway does): such a blocking call fails at once with {@link
     * IllegalStateException}, since it would wait for the thread it runs on.
     */
    public Builder answersOnWriter(boolean answersOnWriter) {
      this.answersOnWriter = answersOnWriter;
      return this;
    }

    /**
     * Opens the file, creating the directory, the file and the schema as needed.
     *
     * @throws IllegalStateException if the table name is schema-qualified: the store's tables live
     *     in its own file
     * @throws StoreUnavailableException if the file cannot be opened, for example because another
     *     process holds it
     * @throws IllegalStateException if {@code org.xerial:sqlite-jdbc} is not on the classpath
     */
    public EmbeddedStore build() {
      SqliteDriver.require();
      if (table.schema() != null) {
        throw new IllegalStateException(
            "tableName must not be schema-qualified for EmbeddedStore; was " + table);
      }
      try {
        Files.createDirectories(dataDir);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot create dataDir " + dataDir, e);
      }
      SqliteDialect dialect = new SqliteDialect(table, clock);
      String url = "jdbc:sqlite:" + dataDir.resolve(FILE_NAME).toAbsolutePath();
      EmbeddedConnection connection = null;
      try {
        connection =
            new EmbeddedConnection(
                url, durability == Durability.SURVIVES_POWER_LOSS, clock, timeoutSeconds());
        connection.onRollback(dialect::forgetReservedTokens);
        connection.run(
            session -> {
              SchemaCreator.create(session.connection(), dialect, session.timeoutSeconds());
              return Boolean.TRUE;
            },
            timeoutSeconds());
      } catch (SQLException e) {
        if (connection != null) {
          connection.close();
        }
        throw Failures.unavailable("opening " + dataDir.resolve(FILE_NAME), table, e);
      }
      return new EmbeddedStore(dialect, connection, timeoutSeconds(), clock, answersOnWriter);
    }
  }
}

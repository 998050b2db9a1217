package dev.once.store.redis;

import dev.once.internal.Arguments;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import dev.once.store.UnreadableRecordException;
import io.lettuce.core.KeyScanArgs;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link IdempotencyStore} on Redis, standalone or Cluster, through Lettuce.
 *
 * <pre>{@code
 * RedisClient client = RedisClient.create("redis://localhost:6379");
 * IdempotencyStore store = RedisStore.builder(client)
 *     .keyPrefix("payments:once:")
 *     .build();
 * }</pre>
 *
 * <p>Each record is one hash, and every operation is one Lua script on it, so each transition is
 * atomic and token-fenced on the server. Time is the server's ({@code TIME} inside the scripts), so
 * clock skew between application nodes cannot shorten or lengthen a lease. A token is the server's
 * clock in microseconds, or one more than the key's last token if that is larger; the hash keeps
 * its last token for {@link Builder#retentionAfterExpiry(Duration) retentionAfterExpiry} after it
 * expires or is released, so a new lease always gets a larger token, even when the server's clock
 * steps back by less than that. Keys carry a hash tag, so in a Cluster every script touches one
 * slot. {@link #awaitChange} listens on Redis pub/sub and marks the record watched; the scripts
 * publish a claim, completion, failure, release or purge only of a watched record, so a store
 * nobody waits on sends no messages (on a cluster, each would go to every node).
 *
 * <p>Redis deletes records by itself {@code retentionAfterExpiry} after they expire; before that an
 * expired record is absent for every operation. {@link #purgeExpired} frees expired records' bodies
 * sooner, with a {@code SCAN} of the keys under the prefix; it is optional here.
 *
 * <p>The store opens its own connections from the given client and closes them in {@link #close()};
 * it never shuts the client down. Every operation waits at most {@link
 * Builder#commandTimeout(Duration) commandTimeout}, then throws {@link StoreUnavailableException};
 * an interrupt does not end the wait sooner (a write that was sent may have landed, and the caller
 * must learn that it did), and is left set for the caller. Each blocking call is its asynchronous
 * namesake awaited (Lettuce is asynchronous), so the two cannot answer differently. See {@code
 * docs/redis-store.md} for durability.
 */
public final class RedisStore implements IdempotencyStore {

  /** The default of {@link Builder#keyPrefix(String)}. */
  public static final String DEFAULT_KEY_PREFIX = "once:";

  /** The default of {@link Builder#commandTimeout(Duration)}. */
  public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);

  /** The default of {@link Builder#batchesAtOnce(int)}. */
  public static final int DEFAULT_BATCHES_AT_ONCE = 1;

  /** The default of {@link Builder#retentionAfterExpiry(Duration)}. */
  public static final Duration DEFAULT_RETENTION_AFTER_EXPIRY = Duration.ofMinutes(10);

  private static final Logger log = LoggerFactory.getLogger(RedisStore.class);
  private static final byte[] COMPLETED = {'C'};
  private static final byte[] FAILED_FINAL = {'F'};
  private static final int SCAN_PAGE = 1000;

  private final String description;
  private final StatefulConnection<byte[], byte[]> connection;
  private final RedisClusterAsyncCommands<byte[], byte[]> commands;
  private final ScriptRunner scripts;
  private final KeyLayout keys;
  private final ToIntFunction<byte[]> slotOf;
  private final boolean standalone;
  private final byte[] retention;
  private final int batchesAtOnce;
  private final ChangeSubscriptions changes;
  private final AtomicBoolean closed = new AtomicBoolean();

  private RedisStore(
      Builder builder,
      StatefulConnection<byte[], byte[]> connection,
      RedisClusterAsyncCommands<byte[], byte[]> commands,
      Supplier<StatefulRedisPubSubConnection<byte[], byte[]>> pubSub,
      ToIntFunction<byte[]> slotOf) {
    this.description =
        "RedisStore["
            + (builder.client != null ? "standalone" : "cluster")
            + ", keyPrefix="
            + builder.keyPrefix
            + ", commandTimeout="
            + builder.commandTimeout
            + ", retentionAfterExpiry="
            + builder.retentionAfterExpiry
            + ", batchesAtOnce="
            + builder.batchesAtOnce
            + "]";
    this.connection = connection;
    this.commands = commands;
    this.scripts =
        new ScriptRunner(commands, builder.commandTimeout, connection.getResources().timer());
    this.keys = new KeyLayout(builder.keyPrefix);
    this.slotOf = slotOf;
    this.standalone = builder.client != null;
    this.retention = Micros.ascii(Micros.toMicros(builder.retentionAfterExpiry));
    this.batchesAtOnce = builder.batchesAtOnce;
    this.changes = new ChangeSubscriptions(pubSub, scripts);
  }

  /** Returns a store on a standalone Redis (or one reached through Sentinel) with the defaults. */
  public static RedisStore of(RedisClient client) {
    return builder(client).build();
  }

  /** Returns a store on a Redis Cluster with the defaults. */
  public static RedisStore of(RedisClusterClient client) {
    return builder(client).build();
  }

  /**
   * Returns a builder for a store on a standalone Redis. The client must have been created with a
   * {@code RedisURI}; the store connects with it and never shuts it down.
   */
  public static Builder builder(RedisClient client) {
    Arguments.present("client", client);
    return new Builder(client, null);
  }

  /** Returns a builder for a store on a Redis Cluster; the store never shuts the client down. */
  public static Builder builder(RedisClusterClient client) {
    Arguments.present("client", client);
    return new Builder(null, client);
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return scripts.join(claimAsync(request, Runnable::run));
  }

  /**
   * {@inheritDoc} Native: the script is sent and its reply handled on Lettuce's thread; none waits.
   */
  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    RecordId id = request.id();
    return read(LuaScript.CLAIM, id, reply -> Replies.claim(id, reply), claimArgs(request));
  }

  private byte[][] claimArgs(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    return new byte[][] {
      request.fingerprint().encoded().getBytes(StandardCharsets.US_ASCII),
      Micros.of(request.lease()),
      Micros.of(request.ttl()),
      retention,
      keys.channel(request.id())
    };
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return scripts.join(getAsync(id, Runnable::run));
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    Objects.requireNonNull(id, "id");
    return read(LuaScript.GET, id, reply -> Replies.get(id, reply));
  }

  /**
   * Runs a script that reads the record (a claim, a get) and decodes its reply. Unlike a {@link
   * #written write under a lease}, it answers a key of another type as a record this version cannot
   * read ({@link Replies#readFailure}).
   */
  private <T> CompletableFuture<T> read(
      LuaScript script, RecordId id, Function<List<Object>, T> decode, byte[]... args) {
    return scripts
        .<List<Object>>call(script, ScriptOutputType.MULTI, keys.recordKey(id), args)
        .handle(
            (reply, failure) -> {
              if (failure != null) {
                throw Replies.readFailure(id, failure);
              }
              return decode.apply(reply);
            });
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    Objects.requireNonNull(id, "id");
    Arguments.positive("lease", lease);
    return scripts.join(
        written(LuaScript.HEARTBEAT, id, Micros.ascii(token), Micros.of(lease), retention));
  }

  /**
   * {@inheritDoc}
   *
   * <p>One script extends up to {@value SlotGroups#MAX_KEYS_PER_SCRIPT} leases whose records share
   * a hash slot (on a standalone Redis, any leases); the scripts a batch needs are sent at once,
   * without waiting for each other's replies, so the batch costs about one round trip and at most
   * the command timeout. Each lease is extended exactly as the single heartbeat would.
   */
  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    return scripts.join(heartbeatAsync(leases, lease, Runnable::run));
  }

  /**
   * {@inheritDoc} Native: the scripts of {@link #heartbeat(Collection, Duration)}, not waited for.
   */
  @Override
  public CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, Duration lease, Executor blocking) {
    Objects.requireNonNull(leases, "leases");
    Arguments.positive("lease", lease);
    RecordId.requireDistinct(leases, LeaseToken::id, "leases");
    List<SlotGroups.Group<LeaseToken>> groups =
        SlotGroups.of(List.copyOf(leases), LeaseToken::id, keys, slotOf);
    byte[] leaseMicros = Micros.of(lease);
    List<CompletableFuture<List<Object>>> runs = new ArrayList<>(groups.size());
    for (SlotGroups.Group<LeaseToken> group : groups) {
      // heartbeat_many's arguments: the lease, the retention, then each lease's token.
      byte[][] args = new byte[2 + group.items().size()][];
      args[0] = leaseMicros;
      args[1] = retention;
      for (int i = 0; i < group.items().size(); i++) {
        args[2 + i] = Micros.ascii(group.items().get(i).token());
      }
      runs.add(
          scripts.runAsync(
              LuaScript.HEARTBEAT_MANY, ScriptOutputType.MULTI, group.keyArray(), args));
    }
    return scripts
        .allAsync(LuaScript.HEARTBEAT_MANY.name(), runs)
        .thenApply(
            replies -> {
              Set<LeaseToken> extended = new HashSet<>();
              for (int g = 0; g < groups.size(); g++) {
                List<LeaseToken> group = groups.get(g).items();
                for (int i = 0; i < group.size(); i++) {
                  if (succeeded((Long) replies.get(g).get(i))) {
                    extended.add(group.get(i));
                  }
                }
              }
              return extended;
            });
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(recoveryPoint, "recoveryPoint");
    Arguments.positive("lease", lease);
    return scripts.join(
        written(
            LuaScript.HEARTBEAT,
            id,
            Micros.ascii(token),
            Micros.of(lease),
            retention,
            recoveryPoint));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return scripts.join(completeAsync(id, token, result, ttl, Runnable::run));
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return scripts.join(failFinalAsync(id, token, result, ttl, Runnable::run));
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return finishAsync(id, token, COMPLETED, result, ttl);
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return finishAsync(id, token, FAILED_FINAL, result, ttl);
  }

  private CompletableFuture<Boolean> finishAsync(
      RecordId id, long token, byte[] state, byte[] result, Duration ttl) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(result, "result");
    Arguments.positive("ttl", ttl);
    return written(
        LuaScript.FINISH,
        id,
        Micros.ascii(token),
        state,
        result,
        Micros.of(ttl),
        retention,
        keys.channel(id));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return scripts.join(releaseAsync(id, token, Runnable::run));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    Objects.requireNonNull(id, "id");
    return written(LuaScript.RELEASE, id, Micros.ascii(token), retention, keys.channel(id));
  }

  @Override
  public boolean endLease(RecordId id, long token) {
    return scripts.join(endLeaseAsync(id, token, Runnable::run));
  }

  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    Objects.requireNonNull(id, "id");
    return written(LuaScript.END_LEASE, id, Micros.ascii(token), keys.channel(id));
  }

  /**
   * Runs a token-fenced write on the record's key: true if it applied. Its failures stay {@link
   * StoreUnavailableException} whatever the key holds, since no lease can be held on a key that is
   * not a record's hash.
   */
  private CompletableFuture<Boolean> written(LuaScript script, RecordId id, byte[]... args) {
    return scripts
        .<Long>call(script, ScriptOutputType.INTEGER, keys.recordKey(id), args)
        .thenApply(RedisStore::succeeded);
  }

  /**
   * True on a standalone Redis: concurrent callers' single calls, gathered by the engine, become
   * one {@code claim_many} or {@code finish_many} script instead of one script each (measured: 32
   * RabbitMQ consumers 0.56–0.64 of the bare consumer without, 0.70–0.74 with, see
   * docs/benchmarks.md). False on a Cluster, where every record has a hash slot of its own, so a
   * gathered batch would still be one script per record.
   */
  @Override
  public boolean batches() {
    return standalone;
  }

  /** What {@link Builder#batchesAtOnce(int)} set, {@value #DEFAULT_BATCHES_AT_ONCE} by default. */
  @Override
  public int batchesAtOnce() {
    return batchesAtOnce;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Waits for {@link #claimAllAsync}: at most the command timeout, or twice that when the batch
   * fails (its claims, then the releases of those that were granted).
   */
  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return scripts.join(claimAllAsync(requests, Runnable::run));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Native: the records are claimed by one script per hash slot (one for a standalone Redis; in
   * a Cluster, where each record has a slot of its own, mostly one per record), at most {@value
   * SlotGroups#MAX_KEYS_PER_SCRIPT} records each, all sent at once and pipelined; the replies are
   * combined in request order. If any script fails, the claims the others were granted are given
   * back ({@link #giveBackUnusedAsync}: nobody saw them, so nothing ran under them) before the
   * batch fails with the first failure.
   */
  @Override
  public CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    requests.forEach(r -> Objects.requireNonNull(r, "request"));
    RecordId.requireDistinct(requests, ClaimRequest::id, "claims");
    List<SlotGroups.Group<ClaimRequest>> groups =
        SlotGroups.of(requests, ClaimRequest::id, keys, slotOf);
    List<CompletableFuture<List<Object>>> runs = new ArrayList<>(groups.size());
    for (SlotGroups.Group<ClaimRequest> group : groups) {
      // claim_many's arguments: the retention, then each record's claim arguments but that.
      List<ClaimRequest> items = group.items();
      byte[][] args = new byte[1 + 4 * items.size()][];
      args[0] = retention;
      for (int i = 0; i < items.size(); i++) {
        ClaimRequest r = items.get(i);
        args[1 + 4 * i] = r.fingerprint().encoded().getBytes(StandardCharsets.US_ASCII);
        args[2 + 4 * i] = Micros.of(r.lease());
        args[3 + 4 * i] = Micros.of(r.ttl());
        args[4 + 4 * i] = keys.channelOfKey(group.keys().get(i));
      }
      runs.add(scripts.call(LuaScript.CLAIM_MANY, ScriptOutputType.MULTI, group.keyArray(), args));
    }
    return settled(runs)
        .thenCompose(
            failed -> {
              Throwable failure = failed;
              ClaimResult[] results = new ClaimResult[requests.size()];
              for (int g = 0; g < groups.size(); g++) {
                CompletableFuture<List<Object>> run = runs.get(g);
                if (run.isCompletedExceptionally()) {
                  continue;
                }
                SlotGroups.Group<ClaimRequest> group = groups.get(g);
                List<Object> replies = run.join();
                for (int i = 0; i < group.items().size(); i++) {
                  @SuppressWarnings("unchecked")
                  List<Object> reply = (List<Object>) replies.get(i);
                  RecordId id = group.items().get(i).id();
                  RuntimeException keyFailure = Replies.claimFailure(id, reply);
                  if (keyFailure == null) {
                    try {
                      results[group.positions().get(i)] = Replies.claim(id, reply);
                    } catch (UnreadableRecordException e) {
                      // That record's own answer; the others' leases are undone below as well.
                      keyFailure = e;
                    }
                  }
                  if (keyFailure != null) {
                    failure = failure == null ? keyFailure : failure;
                  }
                }
              }
              if (failure == null) {
                return CompletableFuture.completedFuture(Arrays.asList(results));
              }
              Throwable first = failure;
              List<CompletableFuture<Boolean>> givenBack = new ArrayList<>();
              for (int i = 0; i < results.length; i++) {
                if (results[i] instanceof ClaimResult.Claimed c) {
                  givenBack.add(
                      giveBackUnusedAsync(requests.get(i).id(), c, blocking).toCompletableFuture());
                }
              }
              return settled(givenBack)
                  .thenCompose(
                      giveBackFailure -> {
                        if (giveBackFailure != null) {
                          first.addSuppressed(giveBackFailure);
                        }
                        return CompletableFuture.failedFuture(first);
                      });
            });
  }

  /** {@inheritDoc} Waits for {@link #finishAllAsync}: at most the command timeout. */
  @Override
  public List<Boolean> finishAll(List<Finish> finishes) {
    return scripts.join(finishAllAsync(finishes, Runnable::run));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Native: the completions and final failures are written by one script per hash slot, as
   * {@link #claimAllAsync} claims; each release by its own script; all sent at once, pipelined, and
   * the replies combined in order. If any fails, the batch fails with it.
   */
  @Override
  public CompletionStage<List<Boolean>> finishAllAsync(List<Finish> finishes, Executor blocking) {
    finishes.forEach(f -> Objects.requireNonNull(f, "finish"));
    RecordId.requireDistinct(finishes, Finish::id, "finishing writes");
    List<Finish> writes = new ArrayList<>();
    List<Integer> written = new ArrayList<>(); // each write's place in the batch
    List<Integer> releases = new ArrayList<>();
    for (int i = 0; i < finishes.size(); i++) {
      if (finishes.get(i).kind() == Finish.Kind.RELEASE) {
        releases.add(i);
      } else {
        writes.add(finishes.get(i));
        written.add(i);
      }
    }
    List<SlotGroups.Group<Finish>> groups = SlotGroups.of(writes, Finish::id, keys, slotOf);
    List<CompletableFuture<?>> runs = new ArrayList<>(groups.size() + releases.size());
    for (SlotGroups.Group<Finish> group : groups) {
      // finish_many's arguments: the retention, then each record's finish arguments but that.
      List<Finish> items = group.items();
      byte[][] args = new byte[1 + 5 * items.size()][];
      args[0] = retention;
      for (int i = 0; i < items.size(); i++) {
        Finish f = items.get(i);
        args[1 + 5 * i] = Micros.ascii(f.token());
        args[2 + 5 * i] = f.kind() == Finish.Kind.COMPLETE ? COMPLETED : FAILED_FINAL;
        args[3 + 5 * i] = f.payload();
        args[4 + 5 * i] = Micros.of(f.ttl());
        args[5 + 5 * i] = keys.channelOfKey(group.keys().get(i));
      }
      runs.add(
          scripts.<List<Object>>call(
              LuaScript.FINISH_MANY, ScriptOutputType.MULTI, group.keyArray(), args));
    }
    for (int i : releases) {
      Finish f = finishes.get(i);
      runs.add(releaseAsync(f.id(), f.token(), blocking).toCompletableFuture());
    }
    return settled(runs)
        .thenCompose(
            failure -> {
              if (failure != null) {
                return CompletableFuture.failedFuture(failure);
              }
              Boolean[] applied = new Boolean[finishes.size()];
              for (int g = 0; g < groups.size(); g++) {
                SlotGroups.Group<Finish> group = groups.get(g);
                List<?> replies = (List<?>) runs.get(g).join();
                for (int i = 0; i < group.items().size(); i++) {
                  Object reply = replies.get(i);
                  if (reply instanceof List<?> error) {
                    StoreUnavailableException keyFailure =
                        Replies.finishFailure(group.items().get(i).id(), error);
                    return CompletableFuture.failedFuture(
                        keyFailure != null
                            ? keyFailure
                            : new StoreUnavailableException(
                                "an unexpected finish reply: " + error));
                  }
                  applied[written.get(group.positions().get(i))] = succeeded((Long) reply);
                }
              }
              for (int r = 0; r < releases.size(); r++) {
                applied[releases.get(r)] = (Boolean) runs.get(groups.size() + r).join();
              }
              return CompletableFuture.completedFuture(Arrays.asList(applied));
            });
  }

  /**
   * Completes when every stage has, with the first failure among them (unwrapped), or null if none
   * failed; unlike {@link CompletableFuture#allOf}, it waits for the rest after a failure.
   */
  private static CompletableFuture<@Nullable Throwable> settled(
      List<? extends CompletableFuture<?>> stages) {
    CompletableFuture<?>[] quiet = new CompletableFuture<?>[stages.size()];
    for (int i = 0; i < quiet.length; i++) {
      quiet[i] = stages.get(i).handle((reply, failure) -> reply);
    }
    return CompletableFuture.allOf(quiet)
        .thenApply(
            all -> {
              for (CompletableFuture<?> stage : stages) {
                if (stage.isCompletedExceptionally()) {
                  Throwable failure = stage.handle((reply, f) -> f).join();
                  return failure instanceof CompletionException && failure.getCause() != null
                      ? failure.getCause()
                      : failure;
                }
              }
              return null;
            });
  }

  /**
   * {@inheritDoc}
   *
   * <p>Optional on Redis, which deletes expired records by itself after {@link
   * Builder#retentionAfterExpiry(Duration) retentionAfterExpiry}. This frees their bodies sooner:
   * it scans the keys under the prefix ({@code SCAN}, on every primary of a Cluster) from the
   * start, and turns each expired record it meets into a tombstone that keeps only its token, until
   * it has purged {@code batchSize} or the scan ends. Each call costs up to a pass over the keys,
   * so call it rarely, or not at all. With a retention of zero, Redis deletes records as they
   * expire and this always returns 0.
   */
  @Override
  public int purgeExpired(int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, was " + batchSize);
    }
    KeyScanArgs args = KeyScanArgs.Builder.type("hash").limit(SCAN_PAGE);
    args.match(keys.scanPattern(), StandardCharsets.US_ASCII);
    ScanCursor cursor = ScanCursor.INITIAL;
    int purged = 0;
    do {
      KeyScanCursor<byte[]> page = scripts.await("the purge scan", commands.scan(cursor, args));
      List<byte[]> found = page.getKeys();
      for (int from = 0; from < found.size() && purged < batchSize; ) {
        int to = Math.min(found.size(), from + batchSize - purged);
        purged += purgeAll(found.subList(from, to));
        from = to;
      }
      cursor = page;
    } while (!cursor.isFinished() && purged < batchSize);
    if (purged > 0) {
      log.debug("purged {} expired records under {}", purged, keys.scanPattern());
    }
    return purged;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: a {@code SCAN} of the keys under the prefix (on every primary of a Cluster), in no
   * order, and a pipelined script per key that reads its metadata and the server's clock, at most
   * {@value #IN_FLIGHT_SCAN_KEYS} keys and {@value #IN_FLIGHT_SCAN_PAGES} {@code SCAN} calls per
   * listing; the oldest of what it found are sorted in memory. When the scan did not reach the end
   * of the keys within that, the answer is incomplete. Records written before the store recorded
   * creation times have none ({@code createdAt} null) and are listed first.
   */
  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    InFlight.check(olderThan, limit);
    byte[] bound = Micros.ascii(Micros.toMicros(olderThan));
    KeyScanArgs args = KeyScanArgs.Builder.type("hash").limit(SCAN_PAGE);
    args.match(keys.scanPattern(), StandardCharsets.US_ASCII);
    ScanCursor cursor = ScanCursor.INITIAL;
    List<IdempotencyRecord> found = new ArrayList<>();
    int examined = 0;
    int pages = 0;
    do {
      KeyScanCursor<byte[]> page = scripts.await("the in-flight scan", commands.scan(cursor, args));
      pages++;
      List<byte[]> recordKeys = page.getKeys();
      List<RecordId> ids = new ArrayList<>(recordKeys.size());
      List<CompletableFuture<List<Object>>> reads = new ArrayList<>(recordKeys.size());
      for (byte[] key : recordKeys) {
        RecordId id = keys.idOf(key);
        if (id != null) {
          ids.add(id);
          reads.add(
              scripts.runAsync(
                  LuaScript.IN_FLIGHT, ScriptOutputType.MULTI, new byte[][] {key}, bound));
        }
      }
      List<List<Object>> replies =
          scripts.join(scripts.allAsync(LuaScript.IN_FLIGHT.name(), reads));
      for (int i = 0; i < replies.size(); i++) {
        Replies.listed(ids.get(i), replies.get(i)).ifPresent(found::add);
      }
      examined += recordKeys.size();
      cursor = page;
    } while (!cursor.isFinished()
        && examined < IN_FLIGHT_SCAN_KEYS
        && pages < IN_FLIGHT_SCAN_PAGES);
    found.sort(InFlight.OLDEST_FIRST);
    return new InFlight(found.subList(0, Math.min(limit, found.size())), cursor.isFinished());
  }

  /** Keys one listing reads at most (give or take a {@code SCAN} page): bounded work per call. */
  static final int IN_FLIGHT_SCAN_KEYS = 10_000;

  /** {@code SCAN} calls one listing makes at most, even when pages come back empty. */
  static final int IN_FLIGHT_SCAN_PAGES = 100;

  /** Runs the purge script on every key at once (pipelined) and returns how many it purged. */
  private int purgeAll(List<byte[]> recordKeys) {
    List<CompletableFuture<Long>> runs = new ArrayList<>(recordKeys.size());
    for (byte[] key : recordKeys) {
      runs.add(
          scripts.runAsync(
              LuaScript.PURGE,
              ScriptOutputType.INTEGER,
              new byte[][] {key},
              retention,
              keys.channelOfKey(key)));
    }
    return scripts.join(scripts.allAsync(LuaScript.PURGE.name(), runs)).stream()
        .mapToInt(Long::intValue)
        .sum();
  }

  /**
   * {@inheritDoc}
   *
   * <p>Subscribes to the record's channel on the store's pub/sub connection (opened on the first
   * wait), returns once Redis has acknowledged the subscription and the record is marked watched
   * (one more round trip). Waiters are woken on a thread of {@link CompletableFuture}'s default
   * async pool, never on Lettuce's event loop.
   */
  @Override
  public CompletableFuture<Void> awaitChange(RecordId id) {
    Objects.requireNonNull(id, "id");
    CompletableFuture<Void> change = changes.await(keys.channel(id));
    try {
      // Subscribed first, then marked: a change after the mark is published, and one before it
      // is seen by the claim the waiter makes next.
      scripts.join(scripts.call(LuaScript.WATCH, ScriptOutputType.INTEGER, keys.recordKey(id)));
    } catch (RuntimeException e) {
      change.cancel(false);
      throw e;
    }
    return change;
  }

  @Override
  public boolean notifiesChanges() {
    return true;
  }

  /** Wakes every waiter and closes the store's connections; the client stays open. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      changes.close();
      connection.closeAsync();
    }
  }

  @Override
  public String toString() {
    return description;
  }

  /** Waits not yet woken or given up, for tests. */
  int waiterCount() {
    return changes.waiterCount();
  }

  private static boolean succeeded(Long reply) {
    return reply != null && reply == 1L;
  }

  /**
   * Configures a {@link RedisStore}. Each setter rejects a bad value at once with an {@link
   * IllegalArgumentException} that names the option; {@link #build()} connects.
   */
  public static final class Builder {

    private static final int MAX_PREFIX_LENGTH = 100;

    private final @Nullable RedisClient client;
    private final @Nullable RedisClusterClient clusterClient;
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
    private Duration retentionAfterExpiry = DEFAULT_RETENTION_AFTER_EXPIRY;
    private int batchesAtOnce = DEFAULT_BATCHES_AT_ONCE;

    private Builder(@Nullable RedisClient client, @Nullable RedisClusterClient clusterClient) {
      this.client = client;
      this.clusterClient = clusterClient;
    }

    /**
     * What every key and channel of the store starts with; default {@value
     * RedisStore#DEFAULT_KEY_PREFIX}. 1 to 100 printable ASCII characters without braces (the
     * braces after it are the records' hash tags). Stores with different prefixes on one Redis
     * never see each other's records.
     */
    public Builder keyPrefix(String keyPrefix) {
      if (keyPrefix == null || keyPrefix.isEmpty() || keyPrefix.length() > MAX_PREFIX_LENGTH) {
        throw new IllegalArgumentException(
            "keyPrefix must be 1 to "
                + MAX_PREFIX_LENGTH
                + " characters, was "
                + (keyPrefix == null ? "null" : "'" + keyPrefix + "'"));
      }
      for (int i = 0; i < keyPrefix.length(); i++) {
        char c = keyPrefix.charAt(i);
        if (c < 0x21 || c > 0x7E || c == '{' || c == '}') {
          throw new IllegalArgumentException(
              "keyPrefix must be printable ASCII without '{' or '}', was '"
                  + keyPrefix
                  + "' (bad character at index "
                  + i
                  + ")");
        }
      }
      this.keyPrefix = keyPrefix;
      return this;
    }

    /**
     * How long one Redis command may take before the operation throws {@link
     * StoreUnavailableException}; default 2 s, at most 10 minutes. It bounds how long a request
     * waits when Redis is down. Set on the store's own connection, not the client's.
     */
    public Builder commandTimeout(Duration commandTimeout) {
      this.commandTimeout =
          Arguments.positive("commandTimeout", commandTimeout, Duration.ofMinutes(10));
      return this;
    }

    /**
     * How long Redis keeps a record after it expires or is released, before deleting it by itself;
     * default 10 minutes, zero to 30 days. Expired records are absent to every operation either
     * way. Meanwhile the hash remembers the key's last token, so tokens keep increasing even if the
     * server's clock steps back by up to this much, and {@link RedisStore#purgeExpired} can find
     * expired records. Zero deletes records the moment they expire: the least memory, but tokens
     * then rely on the server's clock never stepping back (see {@code docs/redis-store.md}).
     */
    public Builder retentionAfterExpiry(Duration retentionAfterExpiry) {
      this.retentionAfterExpiry =
          Arguments.between(
              "retentionAfterExpiry", retentionAfterExpiry, Duration.ZERO, Duration.ofDays(30));
      return this;
    }

    /**
     * How many batches of concurrent callers' claims (and of their finishing writes) the engine may
     * have under way on this store at once ({@link IdempotencyStore#batchesAtOnce}); default
     * {@value RedisStore#DEFAULT_BATCHES_AT_ONCE}, 1 to {@value
     * IdempotencyStore#MOST_BATCHES_AT_ONCE}; used on a standalone Redis only (a Cluster's calls
     * are not gathered). More lets calls go at once while fewer are under way, so Redis is not left
     * idle while answers travel and callers wake: replays spread over many keys by 50 threads of
     * one process were served 1.3 to 1.5 times as fast with 2 or 4. But batches are then smaller,
     * and each costs the client a command and a wake-up: where the client's CPU is the limit, 4
     * cost 10 to 20 % more of it a call, and the gateway on a Redis beside it served 0.7 to 0.9
     * times as many new keys with 2 or 4 as with 1 (docs/benchmarks.md, "Batches at once on
     * Redis").
     */
    public Builder batchesAtOnce(int batchesAtOnce) {
      this.batchesAtOnce =
          Arguments.between(
              "batchesAtOnce", batchesAtOnce, 1, IdempotencyStore.MOST_BATCHES_AT_ONCE);
      return this;
    }

    /**
     * Connects and returns the store. Throws {@link StoreUnavailableException} if Redis cannot be
     * reached.
     */
    public RedisStore build() {
      RedisStore store;
      try {
        if (client != null) {
          StatefulRedisConnection<byte[], byte[]> connection =
              client.connect(ByteArrayCodec.INSTANCE);
          // A standalone Redis has no hash slots: any keys may share a script.
          store =
              connected(
                  connection,
                  connection.async(),
                  () -> client.connectPubSub(ByteArrayCodec.INSTANCE),
                  key -> 0);
        } else {
          RedisClusterClient cluster =
              Objects.requireNonNull(clusterClient, "clusterClient"); // a builder has one client
          StatefulRedisClusterConnection<byte[], byte[]> connection =
              cluster.connect(ByteArrayCodec.INSTANCE);
          store =
              connected(
                  connection,
                  connection.async(),
                  () -> cluster.connectPubSub(ByteArrayCodec.INSTANCE),
                  SlotHash::getSlot);
        }
      } catch (RedisException e) {
        throw new StoreUnavailableException("cannot connect to Redis: " + e.getMessage(), e);
      }
      store.scripts.preload();
      return store;
    }

    private RedisStore connected(
        StatefulConnection<byte[], byte[]> connection,
        RedisClusterAsyncCommands<byte[], byte[]> commands,
        Supplier<StatefulRedisPubSubConnection<byte[], byte[]>> pubSub,
        ToIntFunction<byte[]> slotOf) {
      connection.setTimeout(commandTimeout);
      return new RedisStore(this, connection, commands, pubSub, slotOf);
    }
  }
}

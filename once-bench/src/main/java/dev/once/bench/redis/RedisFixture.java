package dev.once.bench.redis;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.RecordId;
import dev.once.store.redis.RedisStore;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the Redis benchmarks compare: the store's claim and completion of a new key, and the floor,
 * two {@code EVALSHA}s of a script that does nothing, sent with the same key and arguments on one
 * connection of the same client (the store, too, sends everything on one connection). The
 * difference is what the store's scripts and its Java side cost.
 *
 * <p>Records live 5 s with no retention, so a run leaves nothing behind for long.
 */
final class RedisFixture implements AutoCloseable {

  static final String DEFAULT_URI = "redis://127.0.0.1:6379";

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofSeconds(5);
  private static final String PREFIX = "once-bench:";
  private static final byte[] RESULT =
      "{\"status\":201,\"body\":{\"id\":\"pay_123\",\"amount\":\"10.00\"}}"
          .getBytes(StandardCharsets.UTF_8);
  private static final byte[] TRIVIAL = "return 1".getBytes(StandardCharsets.US_ASCII);

  /** The writes a new key's claim makes, with none of its checks: the hash and its expiry. */
  private static final byte[] WRITE_CLAIM =
      ("redis.call('HSET', KEYS[1], 's', 'P', 'f', ARGV[1], 't', ARGV[2], 'l', ARGV[3], 'e',"
              + " ARGV[4]) redis.call('PEXPIREAT', KEYS[1], ARGV[5]) return 1")
          .getBytes(StandardCharsets.US_ASCII);

  /** The writes a completion makes, with none of its checks. */
  private static final byte[] WRITE_FINISH =
      ("redis.call('HSET', KEYS[1], 's', ARGV[1], 'v', ARGV[2], 'e', ARGV[3])"
              + " redis.call('PEXPIREAT', KEYS[1], ARGV[4]) return 1")
          .getBytes(StandardCharsets.US_ASCII);

  private static final byte[] COMPLETED = {'C'};

  private final RedisClient client;
  private final RedisStore store;
  private final StatefulRedisConnection<byte[], byte[]> floorConnection;
  private final RedisAsyncCommands<byte[], byte[]> floor;
  private final String trivialSha;
  private final String writeClaimSha;
  private final String writeFinishSha;
  private final Scope scope = Scope.of("bench", UUID.randomUUID().toString());
  private final Fingerprint fingerprint =
      new Fingerprint(1, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  private final byte[] fingerprintBytes = fingerprint.encoded().getBytes(StandardCharsets.US_ASCII);
  private final byte[] ttlMicros =
      Long.toString(TTL.toNanos() / 1000).getBytes(StandardCharsets.US_ASCII);
  private final AtomicLong keys = new AtomicLong();

  RedisFixture(String uri) {
    client = RedisClient.create(uri);
    store =
        RedisStore.builder(client).keyPrefix(PREFIX).retentionAfterExpiry(Duration.ZERO).build();
    floorConnection = client.connect(ByteArrayCodec.INSTANCE);
    floor = floorConnection.async();
    trivialSha = await(floor.scriptLoad(TRIVIAL));
    writeClaimSha = await(floor.scriptLoad(WRITE_CLAIM));
    writeFinishSha = await(floor.scriptLoad(WRITE_FINISH));
  }

  /** Claims a new key and completes it: the store's two round trips. */
  boolean claimAndComplete() {
    RecordId id = nextId();
    ClaimResult claimed = store.claim(new ClaimRequest(id, fingerprint, LEASE, TTL));
    return store.complete(id, ((ClaimResult.Claimed) claimed).token(), RESULT, TTL);
  }

  /**
   * Claims a new key through the blocking call. Its lease is the record's TTL, so that the keys a
   * run of claims alone leaves behind are gone as soon as those of {@link #claimAndComplete}.
   */
  ClaimResult claim() {
    return store.claim(newClaim());
  }

  /** Claims a new key as {@link #claim} does, through the asynchronous call, awaited. */
  ClaimResult claimAsyncAwaited() {
    return store.claimAsync(newClaim(), Runnable::run).toCompletableFuture().join();
  }

  private ClaimRequest newClaim() {
    return new ClaimRequest(nextId(), fingerprint, TTL, TTL);
  }

  /** The same two round trips to a script that does nothing. */
  long floor() {
    RecordId id = nextId();
    String tag = "{" + id.scope() + "|" + id.key() + "}";
    byte[][] key = {(PREFIX + tag).getBytes(StandardCharsets.UTF_8)};
    byte[] channel = (PREFIX + "changed:" + tag).getBytes(StandardCharsets.UTF_8);
    byte[] token = Long.toString(id.key().hashCode()).getBytes(StandardCharsets.US_ASCII);
    await(
        floor.<Long>evalsha(
            trivialSha,
            ScriptOutputType.INTEGER,
            key,
            fingerprintBytes,
            ttlMicros,
            ttlMicros,
            ttlMicros,
            channel));
    return await(
        floor.<Long>evalsha(
            trivialSha,
            ScriptOutputType.INTEGER,
            key,
            token,
            COMPLETED,
            RESULT,
            ttlMicros,
            ttlMicros,
            channel));
  }

  /**
   * What a hand-written check would at least cost: the same two round trips, each script making the
   * writes the store's makes (a hash of the same fields and its expiry), with no checks, no clock
   * and no change notification.
   */
  long sameWrites() {
    RecordId id = nextId();
    byte[][] key = {
      (PREFIX + "{" + id.scope() + "|" + id.key() + "}").getBytes(StandardCharsets.UTF_8)
    };
    long now = System.currentTimeMillis();
    byte[] micros = Long.toString(now * 1000).getBytes(StandardCharsets.US_ASCII);
    byte[] expireAt = Long.toString(now + TTL.toMillis()).getBytes(StandardCharsets.US_ASCII);
    await(
        floor.<Long>evalsha(
            writeClaimSha,
            ScriptOutputType.INTEGER,
            key,
            fingerprintBytes,
            micros,
            micros,
            micros,
            expireAt));
    return await(
        floor.<Long>evalsha(
            writeFinishSha, ScriptOutputType.INTEGER, key, COMPLETED, RESULT, micros, expireAt));
  }

  @Override
  public void close() {
    store.close();
    floorConnection.close();
    client.shutdown();
  }

  private RecordId nextId() {
    return RecordId.of(scope, IdempotencyKey.of("k" + keys.incrementAndGet()));
  }

  private static <T> T await(RedisFuture<T> future) {
    return LettuceFutures.awaitOrCancel(future, 5, TimeUnit.SECONDS);
  }
}

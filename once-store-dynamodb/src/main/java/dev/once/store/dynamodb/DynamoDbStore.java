package dev.once.store.dynamodb;

import static dev.once.store.dynamodb.Items.CREATED_AT;
import static dev.once.store.dynamodb.Items.EXPIRES_AT;
import static dev.once.store.dynamodb.Items.FINGERPRINT;
import static dev.once.store.dynamodb.Items.IN_PROGRESS;
import static dev.once.store.dynamodb.Items.KEY;
import static dev.once.store.dynamodb.Items.LEASE_UNTIL;
import static dev.once.store.dynamodb.Items.RECOVERY_POINT;
import static dev.once.store.dynamodb.Items.RELEASED;
import static dev.once.store.dynamodb.Items.SCOPE;
import static dev.once.store.dynamodb.Items.STATE;
import static dev.once.store.dynamodb.Items.TOKEN;
import static dev.once.store.dynamodb.Items.TTL;
import static dev.once.store.dynamodb.Items.n;
import static dev.once.store.dynamodb.Items.s;

import dev.once.internal.Arguments;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.ResultTooLargeException;
import dev.once.store.StoreUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DeleteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.PutItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * An {@link IdempotencyStore} on an Amazon DynamoDB table, through the AWS SDK v2's sync client,
 * and its async client too if you give it one.
 *
 * <pre>{@code
 * DynamoDbClient client = DynamoDbClient.create();
 * IdempotencyStore store = DynamoDbStore.builder(client, "once_records").build();
 * }</pre>
 *
 * <p><b>Asynchronous calls.</b> With an {@link Builder#asyncClient(DynamoDbAsyncClient) async
 * client}, {@code claimAsync}, {@code getAsync}, {@code completeAsync}, {@code failFinalAsync} and
 * {@code releaseAsync} are native: they send the same requests and make the same decisions as their
 * blocking namesakes (each operation is written once, as a chain of steps that either client
 * drives), and no thread waits for DynamoDB. Without one, they run the blocking calls on the
 * caller's executor.
 *
 * <p>A claim is one conditional {@code PutItem}; when its condition fails, DynamoDB returns the
 * existing item with the failure ({@code ReturnValuesOnConditionCheckFailure.ALL_OLD}), so a claim
 * that finds a record costs one round trip too. A steal is a second, conditional {@code
 * UpdateItem}. Every other transition is one {@code UpdateItem} or {@code DeleteItem} conditioned
 * on the state and the caller's token; reads are strongly consistent.
 *
 * <p><b>Time.</b> DynamoDB has no clock a request can read, so leases and expiry are measured by
 * this store's {@link Builder#clock(Clock) clock}: application nodes must keep their clocks in sync
 * (NTP), and a lease must be longer than the worst skew between them, or a node whose clock runs
 * ahead may steal a lease that is still live for its holder (fencing still stops the old holder
 * from writing). See {@code docs/dynamodb-store.md}.
 *
 * <p><b>Tokens.</b> A token is the clock in microseconds times 1024 plus a random number below
 * 1024, or one more than the key's last token if that is larger. Released and purged records stay
 * as tombstones that keep the last token for {@link Builder#retentionAfterExpiry(Duration)
 * retentionAfterExpiry}, and expired records stay until then too, so a token is never granted twice
 * for a key unless a clock steps back by more than that <em>and</em> the random part collides.
 *
 * <p><b>Size.</b> A DynamoDB item holds at most 400 KB: results and recovery points of 1 KiB or
 * more are deflated when that makes them smaller, and one that still does not fit in {@link
 * Builder#maxItemBytes(int) maxItemBytes} is refused with a {@link ResultTooLargeException} before
 * anything is written; the record stays in progress, and the engine then records the outcome
 * without its result (retries get "response unavailable", never a second run).
 *
 * <p><b>Batches</b> ({@code claimAll}, the batched heartbeat) run each record's conditional write
 * side by side, at most {@link Builder#batchConcurrency(int) batchConcurrency} at once, on threads
 * the store starts when it needs them and {@link #close()} stops.
 *
 * <p>The store never closes the client. Every call is bounded by {@link
 * Builder#callTimeout(Duration) callTimeout}; a call that fails or times out throws {@link
 * StoreUnavailableException}. A call from an interrupted thread runs as any other, and the thread's
 * interrupt is still set when it returns.
 */
public final class DynamoDbStore implements IdempotencyStore {

  /** The default of {@link Builder#callTimeout(Duration)}. */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(2);

  /** The default of {@link Builder#retentionAfterExpiry(Duration)}. */
  public static final Duration DEFAULT_RETENTION_AFTER_EXPIRY = Duration.ofDays(1);

  /**
   * The default of {@link Builder#batchConcurrency(int)}: the SDK's default HTTP connection pool.
   */
  public static final int DEFAULT_BATCH_CONCURRENCY = 50;

  /** The largest item DynamoDB stores, and the default of {@link Builder#maxItemBytes(int)}. */
  public static final int DYNAMODB_ITEM_LIMIT = 400 * 1024;

  private static final Duration MAX_DURATION = Duration.ofDays(36_500);
  private static final int MAX_ATTEMPTS = 16;
  private static final String HELD = "#state = :inProgress AND #token = :token AND #exp > :now";
  // A tombstone keeps the key's last token and nothing else worth keeping.
  private static final String TOMBSTONE =
      "SET #state = :released, #exp = :now, #ttl = :ttl REMOVE #fp, #lease, #rp, #result, #created";
  private static final String EXPIRED = "#state <> :released AND #exp <= :now";
  private static final String KEY_AND_TOKEN = "#scope, #key, #token";

  private final DynamoDbClient client;
  private final String table;
  private final Clock clock;
  private final long retentionMicros;
  private final int maxItemBytes;
  private final Calls calls;
  private final FanOut batch;

  private DynamoDbStore(Builder builder) {
    this.client = builder.client;
    this.table = builder.tableName;
    this.clock = builder.clock;
    this.retentionMicros = micros(builder.retentionAfterExpiry);
    this.maxItemBytes = builder.maxItemBytes;
    this.calls = new Calls(client, builder.asyncClient, table, builder.callTimeout);
    this.batch = new FanOut(builder.batchConcurrency, builder.callTimeout);
  }

  /** Returns a store on the table with the defaults. */
  public static DynamoDbStore of(DynamoDbClient client, String tableName) {
    return builder(client, tableName).build();
  }

  /** Returns a builder for a store on the table; the store never closes the client. */
  public static Builder builder(DynamoDbClient client, String tableName) {
    return new Builder(client, tableName);
  }

  /**
   * Creates the table the store needs if it does not exist yet, waits until it is active, and turns
   * on DynamoDB TTL on its {@code ttl} attribute: on-demand capacity, partition key {@code scope}
   * (string), sort key {@code idempotency_key} (string). For tests and development; in production,
   * create the table with your infrastructure tooling (see {@code docs/dynamodb-store.md}).
   */
  public static void createTable(DynamoDbClient client, String tableName) {
    Objects.requireNonNull(client, "client");
    Builder.requireTableName(tableName);
    TableSetup.create(client, tableName);
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return calls.run(claiming(request));
  }

  /**
   * {@inheritDoc}
   *
   * <p>With an {@link Builder#asyncClient(DynamoDbAsyncClient) async client}, native: the same
   * requests and decisions as {@link #claim}, sent through that client, each reply handled on the
   * thread the SDK completes it on; no thread waits, and {@code blocking} is not used. Without one,
   * the blocking call runs on {@code blocking}.
   */
  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return calls.stage(
        () -> claiming(request), () -> IdempotencyStore.super.claimAsync(request, blocking));
  }

  private Step<ClaimResult> claiming(ClaimRequest request) {
    Objects.requireNonNull(request, "request");
    return claiming(request, Map.of(), 0);
  }

  /**
   * A claim's next step, given the item its last write found ({@code seen}, empty if none): a put
   * on an absent, released or expired record; a steal of an ended lease; or the existing record. A
   * write whose condition fails decides again on the item it returns, up to {@link #MAX_ATTEMPTS}
   * writes.
   */
  private Step<ClaimResult> claiming(
      ClaimRequest request, Map<String, AttributeValue> seen, int attempt) {
    RecordId id = request.id();
    long now = nowMicros();
    if (!Items.isLive(seen, now)) {
      requireAttemptLeft("claim", id, attempt);
      long floor = seen.isEmpty() ? Long.MIN_VALUE : Items.number(seen, TOKEN);
      long token = nextToken(now, floor);
      long leaseUntil = now + micros(request.lease());
      long expiresAt = Math.max(now + micros(request.ttl()), leaseUntil);
      Map<String, AttributeValue> item = Items.key(id);
      item.put(STATE, s(IN_PROGRESS));
      item.put(FINGERPRINT, s(request.fingerprint().encoded()));
      item.put(TOKEN, n(token));
      item.put(LEASE_UNTIL, n(leaseUntil));
      item.put(EXPIRES_AT, n(expiresAt));
      item.put(TTL, n(ttlSeconds(expiresAt)));
      item.put(CREATED_AT, n(now)); // a steal below leaves it: the work runs since the first claim
      // Absent, or a tombstone or an expired record whose last token is below the new one.
      Map<String, AttributeValue> values =
          Map.of(":released", s(RELEASED), ":now", n(now), ":token", n(token));
      String condition =
          "attribute_not_exists(#scope) OR ((#state = :released OR #exp <= :now) AND #token < :token)";
      PutItemRequest put =
          PutItemRequest.builder()
              .tableName(table)
              .item(item)
              .conditionExpression(condition)
              .expressionAttributeNames(Expressions.names(condition))
              .expressionAttributeValues(Expressions.values(values, condition))
              .returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
              .overrideConfiguration(calls.timeout())
              .build();
      return Step.send(
          Request.put("claim of " + id, put, reading(id)),
          found ->
              found == null
                  ? Step.done(new Claimed(token, Items.instant(leaseUntil), false, null))
                  : claiming(request, found, attempt + 1));
    }
    if (Items.isStealable(seen, now, request.fingerprint())) {
      requireAttemptLeft("claim", id, attempt);
      long token = nextToken(now, Items.number(seen, TOKEN));
      long leaseUntil = now + micros(request.lease());
      long expiresAt = Math.max(Items.number(seen, EXPIRES_AT), leaseUntil);
      Map<String, AttributeValue> values = new HashMap<>();
      values.put(":token", n(token));
      values.put(":lease", n(leaseUntil));
      values.put(":exp", n(expiresAt));
      values.put(":ttl", n(ttlSeconds(expiresAt)));
      values.put(":inProgress", s(IN_PROGRESS));
      values.put(":oldToken", seen.get(TOKEN));
      values.put(":oldLease", seen.get(LEASE_UNTIL));
      values.put(":oldExp", seen.get(EXPIRES_AT));
      // Compare-and-set on everything the steal decision read: a heartbeat or another thief in
      // between makes it fail, and the claim decides again on the item the failure returns.
      return Step.send(
          update(
              "claim (steal)",
              id,
              Items.key(id),
              "SET #token = :token, #lease = :lease, #exp = :exp, #ttl = :ttl",
              "#state = :inProgress AND #token = :oldToken AND #lease = :oldLease AND #exp = :oldExp",
              values,
              true),
          found ->
              found == null
                  ? Step.done(
                      new Claimed(
                          token,
                          Items.instant(leaseUntil),
                          true,
                          Items.bytes(seen, RECOVERY_POINT)))
                  : claiming(request, found, attempt + 1));
    }
    return Step.done(new Existing(Items.toRecord(id, seen, now)));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Each record is claimed by its own conditional write, exactly as {@link #claim} makes it
   * (DynamoDB has no multi-item conditional write that lets some items find a record while the
   * others are written), and the claims run side by side (see {@link
   * Builder#batchConcurrency(int)}): a batch of up to that many records costs about one round trip.
   * If one claim fails, the claims not sent yet are dropped, and once those sent have answered, the
   * claims they were granted are given back ({@link #giveBackUnused}) before the failure is thrown.
   */
  @Override
  public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    requests.forEach(request -> Objects.requireNonNull(request, "request"));
    RecordId.requireDistinct(requests, ClaimRequest::id, "claims");
    if (requests.size() <= 1) {
      return requests.isEmpty() ? List.of() : List.of(claim(requests.get(0)));
    }
    return batch.map(
        "claimAll",
        requests,
        request -> calls.run(claiming(request)),
        (request, granted) -> {
          if (granted instanceof Claimed c) {
            giveBackUnused(request.id(), c);
          }
        });
  }

  /**
   * {@inheritDoc}
   *
   * <p>The claims of {@link #claimAll}, side by side in the same way (at most {@link
   * Builder#batchConcurrency(int) batchConcurrency} of this batch at once), each as {@link
   * #claimAsync}: native with an async client, no thread waiting; without one, each blocking claim
   * on {@code blocking}. The same all or nothing: the stage fails only after the claims of a failed
   * batch are given back.
   */
  @Override
  public CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    requests.forEach(request -> Objects.requireNonNull(request, "request"));
    RecordId.requireDistinct(requests, ClaimRequest::id, "claims");
    return batch.mapAsync(
        "claimAll",
        requests,
        request -> claimAsync(request, blocking),
        (request, granted) ->
            granted instanceof Claimed c
                ? giveBackUnusedAsync(request.id(), c, blocking)
                : CompletableFuture.completedFuture(null));
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return calls.run(getting(id));
  }

  /** {@inheritDoc} Native with an async client, as {@link #claimAsync}. */
  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return calls.stage(() -> getting(id), () -> IdempotencyStore.super.getAsync(id, blocking));
  }

  private Step<Optional<IdempotencyRecord>> getting(RecordId id) {
    Objects.requireNonNull(id, "id");
    return Step.read(
        Request.read("get of " + id, reading(id)),
        item -> {
          long now = nowMicros();
          return Step.done(
              Items.isLive(item, now)
                  ? Optional.of(Items.toRecord(id, item, now))
                  : Optional.empty());
        });
  }

  @Override
  public boolean heartbeat(RecordId id, long token, Duration lease) {
    Objects.requireNonNull(id, "id");
    Arguments.positive("lease", lease);
    return calls.run(extending(id, token, lease, null, 0));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Each lease is its own conditional update, exactly as {@link #heartbeat(RecordId, long,
   * Duration)} makes it, and the updates run side by side (see {@link
   * Builder#batchConcurrency(int)}), so a batch of up to that many leases costs about one round
   * trip. The first update that fails ends the batch with {@link StoreUnavailableException}, once
   * the updates already sent have answered; those not sent yet are dropped.
   */
  @Override
  public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    Objects.requireNonNull(leases, "leases");
    Arguments.positive("lease", lease);
    RecordId.requireDistinct(leases, LeaseToken::id, "leases");
    List<LeaseToken> all = List.copyOf(leases);
    List<Boolean> extended =
        batch.map(
            "heartbeat",
            all,
            held -> calls.run(extending(held.id(), held.token(), lease, null, 0)),
            (held, extendedOrNot) -> {});
    Set<LeaseToken> kept = new HashSet<>();
    for (int i = 0; i < all.size(); i++) {
      if (extended.get(i)) {
        kept.add(all.get(i));
      }
    }
    return kept;
  }

  @Override
  public boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(recoveryPoint, "recoveryPoint");
    Arguments.positive("lease", lease);
    return calls.run(
        extending(id, token, lease, encodeFitting(id, recoveryPoint, "recovery point"), 0));
  }

  /**
   * Sets the lease end, and the recovery point if given. The common case, a record that outlives
   * the new lease, is one update; if the lease would outlast the record, a second update pushes the
   * expiry too (DynamoDB cannot compute a maximum in one update).
   *
   * <p>A lease is never shortened. Its end is computed from this client's clock before the request
   * leaves, so two extensions of one lease can land in the other order (or come from two processes
   * whose clocks differ): the one computed earlier must not pull back the end that the later one
   * already promised its holder, or a thief could take the key while the holder still counts on it.
   * An extension that finds the lease already running longer has nothing to do but keep the
   * recovery point.
   */
  private Step<Boolean> extending(
      RecordId id, long token, Duration lease, @Nullable SdkBytes recoveryPoint, int attempt) {
    requireAttemptLeft("heartbeat", id, attempt);
    long now = nowMicros();
    long leaseUntil = now + micros(lease);
    Map<String, AttributeValue> values = heldValues(token, now);
    values.put(":lease", n(leaseUntil));
    String keepPoint = "";
    if (recoveryPoint != null) {
      values.put(":rp", AttributeValue.fromB(recoveryPoint));
      keepPoint = ", #rp = :rp";
    }
    String longer = HELD + " AND #lease < :lease";
    String setPoint = keepPoint;
    return Step.send(
        update(
            "heartbeat",
            id,
            Items.key(id),
            "SET #lease = :lease" + setPoint,
            longer + " AND #exp >= :lease",
            values,
            true),
        seen -> {
          if (seen == null) {
            return Step.done(true);
          }
          if (!isHeldBy(seen, token, now)) {
            return Step.done(false);
          }
          if (Items.number(seen, LEASE_UNTIL) >= leaseUntil) {
            return recoveryPoint == null ? Step.done(true) : keepingRecoveryPoint(id, values);
          }
          if (Items.number(seen, EXPIRES_AT) >= leaseUntil) {
            // The expiry moved past the lease in between: decide again.
            return extending(id, token, lease, recoveryPoint, attempt + 1);
          }
          values.put(":ttl", n(ttlSeconds(leaseUntil)));
          return Step.send(
              update(
                  "heartbeat",
                  id,
                  Items.key(id),
                  "SET #lease = :lease, #exp = :lease, #ttl = :ttl" + setPoint,
                  longer + " AND #exp < :lease",
                  values,
                  true),
              again -> {
                if (again == null) {
                  return Step.done(true);
                }
                return isHeldBy(again, token, now)
                    ? extending(id, token, lease, recoveryPoint, attempt + 1)
                    : Step.done(false);
              });
        });
  }

  /** Writes a checkpoint's recovery point on a lease that already runs longer than it asked for. */
  private Step<Boolean> keepingRecoveryPoint(RecordId id, Map<String, AttributeValue> values) {
    return Step.send(
        update("checkpoint", id, Items.key(id), "SET #rp = :rp", HELD, values, false),
        seen -> Step.done(seen == null));
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
    return calls.run(finishing(id, token, RecordState.COMPLETED, result, ttl));
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return calls.run(finishing(id, token, RecordState.FAILED_FINAL, result, ttl));
  }

  /** {@inheritDoc} Native with an async client, as {@link #claimAsync}. */
  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return calls.stage(
        () -> finishing(id, token, RecordState.COMPLETED, result, ttl),
        () -> IdempotencyStore.super.completeAsync(id, token, result, ttl, blocking));
  }

  /** {@inheritDoc} Native with an async client, as {@link #claimAsync}. */
  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return calls.stage(
        () -> finishing(id, token, RecordState.FAILED_FINAL, result, ttl),
        () -> IdempotencyStore.super.failFinalAsync(id, token, result, ttl, blocking));
  }

  /**
   * One token-fenced update to the final state; a value too large is refused before any request.
   */
  private Step<Boolean> finishing(
      RecordId id, long token, RecordState state, byte[] result, Duration ttl) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(result, "result");
    Arguments.positive("ttl", ttl);
    SdkBytes stored = encodeFitting(id, result, "result");
    long now = nowMicros();
    long expiresAt = now + micros(ttl);
    Map<String, AttributeValue> values = heldValues(token, now);
    values.put(":state", s(state.name()));
    values.put(":result", AttributeValue.fromB(stored));
    values.put(":exp", n(expiresAt));
    values.put(":ttl", n(ttlSeconds(expiresAt)));
    return Step.send(
        update(
            state == RecordState.COMPLETED ? "complete" : "failFinal",
            id,
            Items.key(id),
            "SET #state = :state, #result = :result, #exp = :exp, #ttl = :ttl REMOVE #rp",
            HELD,
            values,
            false),
        seen -> Step.done(seen == null));
  }

  @Override
  public boolean release(RecordId id, long token) {
    return calls.run(releasing(id, token));
  }

  /** {@inheritDoc} Native with an async client, as {@link #claimAsync}. */
  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return calls.stage(
        () -> releasing(id, token), () -> IdempotencyStore.super.releaseAsync(id, token, blocking));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: one conditional update of the lease's end, to this store's clock (a store on a clock
   * behind it sees the lease end that much later).
   */
  @Override
  public boolean endLease(RecordId id, long token) {
    return calls.run(endingLease(id, token));
  }

  /** {@inheritDoc} Native with an async client, as {@link #claimAsync}. */
  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return calls.stage(
        () -> endingLease(id, token),
        () -> IdempotencyStore.super.endLeaseAsync(id, token, blocking));
  }

  private Step<Boolean> endingLease(RecordId id, long token) {
    Objects.requireNonNull(id, "id");
    long now = nowMicros();
    return Step.send(
        update(
            "endLease",
            id,
            Items.key(id),
            "SET #lease = :now",
            HELD,
            heldValues(token, now),
            false),
        seen -> Step.done(seen == null));
  }

  private Step<Boolean> releasing(RecordId id, long token) {
    Objects.requireNonNull(id, "id");
    long now = nowMicros();
    Map<String, AttributeValue> values = heldValues(token, now);
    return burying("release", id, Items.key(id), HELD, values, now);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Optional on DynamoDB, whose TTL deletes items by itself (lazily) after {@link
   * Builder#retentionAfterExpiry(Duration) retentionAfterExpiry}. This frees expired records'
   * bodies sooner: a strongly consistent {@code Scan} of the table from its start, filtered to
   * expired records, and one conditional update per record found that turns it into a tombstone (or
   * deletes it, with a retention of zero). A scan reads, and is billed for, the whole table in the
   * worst case, so call it rarely, or not at all.
   */
  @Override
  public int purgeExpired(int batchSize) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1, was " + batchSize);
    }
    long now = nowMicros();
    int purged = 0;
    Map<String, AttributeValue> startKey = null;
    do {
      Map<String, AttributeValue> from = startKey;
      ScanResponse page =
          calls.call(
              "purgeExpired",
              () ->
                  client.scan(
                      r ->
                          r.tableName(table)
                              .consistentRead(true)
                              .filterExpression(EXPIRED)
                              .projectionExpression(KEY_AND_TOKEN)
                              .expressionAttributeNames(Expressions.names(EXPIRED, KEY_AND_TOKEN))
                              .expressionAttributeValues(
                                  Map.of(":released", s(RELEASED), ":now", n(now)))
                              .exclusiveStartKey(from)
                              .overrideConfiguration(calls.timeout())));
      for (Map<String, AttributeValue> found : page.items()) {
        if (purged >= batchSize) {
          break;
        }
        if (calls.run(purgingOne(found, now))) {
          purged++;
        }
      }
      startKey =
          page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
              ? page.lastEvaluatedKey()
              : null;
    } while (startKey != null && purged < batchSize);
    return purged;
  }

  /**
   * {@inheritDoc}
   *
   * <p>Here: a strongly consistent {@code Scan} of the table, in no order, filtered on the server
   * (live, in progress, created at least {@code olderThan} ago or at an unknown time), at most
   * {@value #IN_FLIGHT_SCAN_PAGES} pages of up to 1 MB each; the oldest of what it found are sorted
   * in memory. When the scan did not reach the end of the table within that, the answer is
   * incomplete. Items written before the store recorded creation times have none ({@code createdAt}
   * null) and are listed first.
   */
  @Override
  public InFlight inFlight(Duration olderThan, int limit) {
    InFlight.check(olderThan, limit);
    long now = nowMicros();
    Map<String, AttributeValue> values = new HashMap<>();
    values.put(":inProgress", s(IN_PROGRESS));
    values.put(":now", n(now));
    values.put(":cutoff", n(now - micros(olderThan)));
    List<IdempotencyRecord> found = new ArrayList<>();
    Map<String, AttributeValue> startKey = null;
    int pages = 0;
    do {
      Map<String, AttributeValue> from = startKey;
      ScanResponse page =
          calls.call(
              "inFlight",
              () ->
                  client.scan(
                      r ->
                          r.tableName(table)
                              .consistentRead(true)
                              .filterExpression(RUNNING)
                              .projectionExpression(LISTED)
                              .expressionAttributeNames(Expressions.names(RUNNING, LISTED))
                              .expressionAttributeValues(Expressions.values(values, RUNNING))
                              .exclusiveStartKey(from)
                              .overrideConfiguration(calls.timeout())));
      pages++;
      for (Map<String, AttributeValue> item : page.items()) {
        found.add(listed(item, now));
      }
      startKey =
          page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
              ? page.lastEvaluatedKey()
              : null;
    } while (startKey != null && pages < IN_FLIGHT_SCAN_PAGES);
    found.sort(InFlight.OLDEST_FIRST);
    return new InFlight(found.subList(0, Math.min(limit, found.size())), startKey == null);
  }

  /** {@code Scan} pages one listing reads at most: bounded work (and read capacity) per call. */
  static final int IN_FLIGHT_SCAN_PAGES = 10;

  private static final String RUNNING =
      "#state = :inProgress AND #exp > :now"
          + " AND (attribute_not_exists(#created) OR #created <= :cutoff)";
  private static final String LISTED =
      "#scope, #key, #state, #fp, #token, #lease, #exp, #rp, #created";
  private static final byte[] NO_BYTES = new byte[0];

  /** A listed record: metadata only, the recovery point reduced to whether there is one. */
  private static IdempotencyRecord listed(Map<String, AttributeValue> item, long now) {
    IdempotencyRecord r =
        Items.toRecord(
            RecordId.of(
                new dev.once.Scope(Items.string(item, SCOPE)),
                dev.once.IdempotencyKey.of(Items.string(item, KEY))),
            item,
            now);
    return new IdempotencyRecord(
        r.id(),
        r.state(),
        r.fingerprint(),
        r.token(),
        r.leaseUntil(),
        r.expiresAt(),
        item.containsKey(RECOVERY_POINT) ? NO_BYTES : null,
        null,
        r.observedAt(),
        r.createdAt());
  }

  private Step<Boolean> purgingOne(Map<String, AttributeValue> found, long now) {
    Map<String, AttributeValue> values = new HashMap<>();
    values.put(":token", found.get(TOKEN));
    values.put(":now", n(now));
    values.put(":released", s(RELEASED));
    return burying(
        "purgeExpired",
        null,
        Map.of(SCOPE, found.get(SCOPE), KEY, found.get(KEY)),
        "#token = :token AND #exp <= :now AND #state <> :released",
        values,
        now);
  }

  /**
   * Makes the record absent if {@code condition} holds: a tombstone that keeps its token until the
   * retention ends, or, with no retention, no item at all. Answers whether it did.
   */
  private Step<Boolean> burying(
      String operation,
      @Nullable RecordId id,
      Map<String, AttributeValue> key,
      String condition,
      Map<String, AttributeValue> values,
      long now) {
    Request<?> request;
    if (retentionMicros == 0) {
      request =
          Request.delete(
              what(operation, id),
              DeleteItemRequest.builder()
                  .tableName(table)
                  .key(key)
                  .conditionExpression(condition)
                  .expressionAttributeNames(Expressions.names(condition))
                  .expressionAttributeValues(Expressions.values(values, condition))
                  .overrideConfiguration(calls.timeout())
                  .build());
    } else {
      values.put(":released", s(RELEASED));
      values.put(":ttl", n(ttlSeconds(now)));
      request = update(operation, id, key, TOMBSTONE, condition, values, false);
    }
    return Step.send(request, seen -> Step.done(seen == null));
  }

  /**
   * A conditional {@code UpdateItem}. Its reply is {@code null} if applied, else the item as it
   * stood: with {@code returnOld}, DynamoDB sends it with the failure (or, where it does not, the
   * item is read); without, an empty item.
   */
  private Request<UpdateItemResponse> update(
      String operation,
      @Nullable RecordId id,
      Map<String, AttributeValue> key,
      String update,
      String condition,
      Map<String, AttributeValue> values,
      boolean returnOld) {
    return Request.update(
        what(operation, id),
        UpdateItemRequest.builder()
            .tableName(table)
            .key(key)
            .updateExpression(update)
            .conditionExpression(condition)
            .expressionAttributeNames(Expressions.names(update, condition))
            .expressionAttributeValues(Expressions.values(values, update, condition))
            .returnValuesOnConditionCheckFailure(
                returnOld
                    ? ReturnValuesOnConditionCheckFailure.ALL_OLD
                    : ReturnValuesOnConditionCheckFailure.NONE)
            .overrideConfiguration(calls.timeout())
            .build(),
        returnOld && id != null ? reading(id) : null);
  }

  /** Stops the store's batch threads once their requests are done; the client stays open. */
  @Override
  public void close() {
    batch.close();
  }

  @Override
  public String toString() {
    return "DynamoDbStore[table="
        + table
        + ", clock="
        + clock
        + ", maxItemBytes="
        + maxItemBytes
        + "]";
  }

  /** The strongly consistent read of a record's item. */
  private GetItemRequest reading(RecordId id) {
    return GetItemRequest.builder()
        .tableName(table)
        .key(Items.key(id))
        .consistentRead(true)
        .overrideConfiguration(calls.timeout())
        .build();
  }

  private static String what(String operation, @Nullable RecordId id) {
    return id == null ? operation : operation + " of " + id;
  }

  /** Refuses one more write once an operation has made {@link #MAX_ATTEMPTS}, all losing races. */
  private static void requireAttemptLeft(String operation, RecordId id, int attempt) {
    if (attempt >= MAX_ATTEMPTS) {
      throw new StoreUnavailableException(
          operation
              + " of "
              + id
              + " kept losing races on DynamoDB after "
              + MAX_ATTEMPTS
              + " attempts");
    }
  }

  private SdkBytes encodeFitting(RecordId id, byte[] value, String what) {
    SdkBytes stored = BinaryValues.encode(value);
    int size = Items.estimatedSize(id, stored.asByteArrayUnsafe().length);
    if (size > maxItemBytes) {
      throw new ResultTooLargeException(
          "the "
              + what
              + " of "
              + id
              + " is "
              + value.length
              + " bytes ("
              + stored.asByteArrayUnsafe().length
              + " stored), so its item would be about "
              + size
              + " bytes, over maxItemBytes "
              + maxItemBytes
              + "; nothing was written. Cap results below that "
              + "(the engine's maximum result size) on DynamoDB");
    }
    return stored;
  }

  private static boolean isHeldBy(Map<String, AttributeValue> item, long token, long now) {
    return Items.isLive(item, now)
        && IN_PROGRESS.equals(Items.string(item, STATE))
        && Items.number(item, TOKEN) == token;
  }

  private static Map<String, AttributeValue> heldValues(long token, long now) {
    Map<String, AttributeValue> values = new HashMap<>();
    values.put(":inProgress", s(IN_PROGRESS));
    values.put(":token", n(token));
    values.put(":now", n(now));
    return values;
  }

  private long nowMicros() {
    Instant now = clock.instant();
    return Math.addExact(
        Math.multiplyExact(now.getEpochSecond(), 1_000_000L), now.getNano() / 1000);
  }

  /**
   * The clock in microseconds times 1024 plus a random part, or one more than {@code floor}: larger
   * than every token the key had, and unlikely to meet one granted before its tombstone was deleted
   * even if a clock stepped back that far.
   */
  private static long nextToken(long nowMicros, long floor) {
    long candidate = nowMicros * 1024 + ThreadLocalRandom.current().nextInt(1024);
    return floor == Long.MIN_VALUE ? candidate : Math.max(candidate, floor + 1);
  }

  private long ttlSeconds(long untilMicros) {
    return Math.floorDiv(untilMicros + retentionMicros, 1_000_000L) + 1;
  }

  private static long micros(Duration d) {
    Duration capped = d.compareTo(MAX_DURATION) > 0 ? MAX_DURATION : d;
    return capped.getSeconds() * 1_000_000L + (capped.getNano() + 999) / 1000;
  }

  /**
   * Configures a {@link DynamoDbStore}. Each setter rejects a bad value at once with an {@link
   * IllegalArgumentException} that names the option.
   */
  public static final class Builder {

    private static final Pattern TABLE_NAME = Pattern.compile("[a-zA-Z0-9_.-]{3,255}");

    private final DynamoDbClient client;
    private final String tableName;
    private @Nullable DynamoDbAsyncClient asyncClient;
    private Clock clock = Clock.systemUTC();
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private Duration retentionAfterExpiry = DEFAULT_RETENTION_AFTER_EXPIRY;
    private int maxItemBytes = DYNAMODB_ITEM_LIMIT;
    private int batchConcurrency = DEFAULT_BATCH_CONCURRENCY;

    private Builder(DynamoDbClient client, String tableName) {
      this.client = Arguments.present("client", client);
      this.tableName = requireTableName(tableName);
    }

    static String requireTableName(String tableName) {
      if (tableName == null || !TABLE_NAME.matcher(tableName).matches()) {
        throw new IllegalArgumentException(
            "tableName must be 3 to 255 of a-z, A-Z, 0-9, '_', '-' and '.', was "
                + (tableName == null ? "null" : "'" + tableName + "'"));
      }
      return tableName;
    }

    /**
     * An async client of the same table (same account, region and endpoint as the sync client),
     * which makes {@link DynamoDbStore#claimAsync claimAsync}, {@code getAsync}, {@code
     * completeAsync}, {@code failFinalAsync} and {@code releaseAsync} native: their requests go
     * through it, their replies are handled on the thread the SDK completes them on, and no thread
     * waits. Without one (the default), those calls run the blocking ones on the executor their
     * caller passes. The blocking calls always use the sync client. The store never closes it.
     */
    public Builder asyncClient(DynamoDbAsyncClient asyncClient) {
      this.asyncClient = Arguments.present("asyncClient", asyncClient);
      return this;
    }

    /**
     * The clock leases, expiry and tokens are measured by; default {@link Clock#systemUTC()}. Every
     * application node sharing the table should run a synchronised clock (see the class comment).
     */
    public Builder clock(Clock clock) {
      this.clock = Arguments.present("clock", clock);
      return this;
    }

    /**
     * How long one operation may take, retries included, before it throws {@link
     * StoreUnavailableException}; default 2 s, at most 10 minutes. Set on each request, so it holds
     * whatever the client's own timeouts are.
     */
    public Builder callTimeout(Duration callTimeout) {
      this.callTimeout = Arguments.positive("callTimeout", callTimeout, Duration.ofMinutes(10));
      return this;
    }

    /**
     * How long an expired or released record stays in the table, as a tombstone that remembers the
     * key's last token, before its TTL lets DynamoDB delete it; default 1 day, zero to 365 days.
     * Zero deletes released records at once and lets TTL delete expired ones as soon as it gets to
     * them: tokens then rely on the clocks never stepping back.
     */
    public Builder retentionAfterExpiry(Duration retentionAfterExpiry) {
      this.retentionAfterExpiry =
          Arguments.between(
              "retentionAfterExpiry", retentionAfterExpiry, Duration.ZERO, Duration.ofDays(365));
      return this;
    }

    /**
     * The largest item the store writes, in bytes, as DynamoDB counts them; default and maximum
     * {@value DynamoDbStore#DYNAMODB_ITEM_LIMIT} (DynamoDB's limit), at least 4096. A result or
     * recovery point whose item would be larger, after compression, is refused with an {@link
     * IllegalArgumentException} before anything is written.
     */
    public Builder maxItemBytes(int maxItemBytes) {
      this.maxItemBytes =
          Arguments.between("maxItemBytes", maxItemBytes, 4096, DYNAMODB_ITEM_LIMIT);
      return this;
    }

    /**
     * How many requests the batch calls ({@code claimAll}, the batched heartbeat) run at once,
     * across every caller of the store; default {@value DynamoDbStore#DEFAULT_BATCH_CONCURRENCY}, 1
     * to 1000. It is also how many threads the store may start for them (they end after a minute
     * idle). Keep it at or below the client's HTTP connection pool (the Apache client's {@code
     * maxConnections}, 50 by default): requests beyond it only wait for a connection.
     */
    public Builder batchConcurrency(int batchConcurrency) {
      this.batchConcurrency = Arguments.between("batchConcurrency", batchConcurrency, 1, 1000);
      return this;
    }

    /**
     * Returns the store. It does not call DynamoDB: a missing table shows on the first operation.
     */
    public DynamoDbStore build() {
      return new DynamoDbStore(this);
    }
  }
}

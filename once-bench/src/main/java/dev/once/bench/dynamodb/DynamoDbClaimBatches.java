package dev.once.bench.dynamodb;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.dynamodb.DynamoDbStore;
import dev.once.tck.FaultProxy;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A consumer's poll claimed on DynamoDB: {@code claimAll} of a batch of new records, which the
 * store runs side by side ({@code batchConcurrency}, 50), against the same claims made one after
 * another (the SPI's default {@code claimAll}, reached through a {@link ForwardingStore}), and
 * against the floor: the same number of bare conditional {@code PutItem}s of an item of the same
 * shape, sent side by side by 50 threads through the same client. DynamoDB Local runs in this JVM
 * (in memory); a {@link FaultProxy} in front of it holds each response back for {@code
 * latencyMillis}, to stand for the round trip to a table in a region. Rounds interleave the three
 * sides, each round starting with another, so that load from other processes falls on all alike;
 * prints each side's median time per batch and the ratios.
 *
 * <p>Arguments: {@code latencyMillis batchSize rounds}. Needs {@code
 * -Dsqlite4java.library.path=once-bench/target/native-libs}.
 */
public final class DynamoDbClaimBatches {

  private static final int CONCURRENCY = DynamoDbStore.DEFAULT_BATCH_CONCURRENCY;
  private static final Scope SCOPE = Scope.of("bench", "claims");
  private static final Fingerprint FINGERPRINT = new Fingerprint(1, "ab".repeat(32));
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofHours(1);
  private static final String[] SIDES = {"bare", "batch", "one at a time"};

  private DynamoDbClaimBatches() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: DynamoDbClaimBatches latencyMillis batchSize rounds");
      System.exit(2);
    }
    Duration latency = Duration.ofMillis(Long.parseLong(args[0]));
    int batchSize = Integer.parseInt(args[1]);
    int rounds = Integer.parseInt(args[2]);
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    DynamoDBProxyServer server =
        ServerRunner.createServerFromCommandLineArgs(
            new String[] {"-inMemory", "-port", Integer.toString(port), "-disableTelemetry"});
    server.start();
    ExecutorService bare = Executors.newFixedThreadPool(CONCURRENCY);
    try (FaultProxy proxy = FaultProxy.to(port);
        DynamoDbClient client = client(proxy.port());
        DynamoDbStore store =
            DynamoDbStore.builder(client, "once_bench")
                .callTimeout(Duration.ofSeconds(30))
                .build()) {
      DynamoDbStore.createTable(client, "once_bench");
      IdempotencyStore oneAtATime =
          new ForwardingStore() {
            @Override
            protected IdempotencyStore delegate() {
              return store;
            }
          };
      proxy.delayResponses(1_000_000, latency); // the most it takes: every response of the run
      // Warm-up: connections, the JIT, DynamoDB Local's tables.
      for (int i = 0; i < 3; i++) {
        run(0, batchSize, client, store, oneAtATime, bare);
        run(1, batchSize, client, store, oneAtATime, bare);
      }
      long[][] nanos = new long[SIDES.length][rounds];
      for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < SIDES.length; i++) {
          int side = (round + i) % SIDES.length;
          nanos[side][round] = run(side, batchSize, client, store, oneAtATime, bare);
        }
      }
      double[] median = new double[SIDES.length];
      for (int side = 0; side < SIDES.length; side++) {
        median[side] = median(nanos[side]) / 1e6;
        System.out.printf(
            "%-14s %9.1f ms per batch of %d (%.0f records/s)%n",
            SIDES[side], median[side], batchSize, batchSize / (median[side] / 1e3));
      }
      System.out.printf(
          "latency %d ms: batch / bare %.2f; one at a time / batch %.1f%n",
          latency.toMillis(), median[1] / median[0], median[2] / median[1]);
    } finally {
      bare.shutdownNow();
      server.stop();
    }
    System.exit(0); // DynamoDB Local leaves a thread that is not a daemon
  }

  /** One batch of new records through one side; returns how long it took. */
  private static long run(
      int side,
      int batchSize,
      DynamoDbClient client,
      DynamoDbStore store,
      IdempotencyStore oneAtATime,
      ExecutorService bare)
      throws Exception {
    List<ClaimRequest> requests = new ArrayList<>(batchSize);
    for (int i = 0; i < batchSize; i++) {
      RecordId id = RecordId.of(SCOPE, IdempotencyKey.of(UUID.randomUUID().toString()));
      requests.add(new ClaimRequest(id, FINGERPRINT, LEASE, TTL));
    }
    long start = System.nanoTime();
    switch (side) {
      case 0 -> putSideBySide(client, requests, bare);
      case 1 -> requireClaimed(store.claimAll(requests));
      default -> requireClaimed(oneAtATime.claimAll(requests));
    }
    return System.nanoTime() - start;
  }

  /** The floor: one conditional PutItem per record, as a claim's, {@code CONCURRENCY} at once. */
  private static void putSideBySide(
      DynamoDbClient client, List<ClaimRequest> requests, ExecutorService pool) throws Exception {
    List<Future<?>> puts = new ArrayList<>(requests.size());
    long now = System.currentTimeMillis() * 1000;
    for (ClaimRequest request : requests) {
      Map<String, AttributeValue> item = new HashMap<>();
      item.put("scope", AttributeValue.fromS(request.id().scope().value()));
      item.put("idempotency_key", AttributeValue.fromS(request.id().key().value()));
      item.put("state", AttributeValue.fromS("IN_PROGRESS"));
      item.put("fingerprint", AttributeValue.fromS(request.fingerprint().encoded()));
      item.put("token", AttributeValue.fromN(Long.toString(now * 1024)));
      item.put("lease_until_us", AttributeValue.fromN(Long.toString(now + 30_000_000)));
      item.put("expires_at_us", AttributeValue.fromN(Long.toString(now + 3_600_000_000L)));
      item.put("ttl", AttributeValue.fromN(Long.toString(now / 1_000_000 + 90_000)));
      item.put("created_at_us", AttributeValue.fromN(Long.toString(now)));
      puts.add(
          pool.submit(
              () ->
                  client.putItem(
                      r ->
                          r.tableName("once_bench")
                              .item(item)
                              .conditionExpression("attribute_not_exists(#s)")
                              .expressionAttributeNames(Map.of("#s", "scope")))));
    }
    for (Future<?> put : puts) {
      put.get();
    }
  }

  private static void requireClaimed(List<ClaimResult> results) {
    for (ClaimResult r : results) {
      if (!(r instanceof ClaimResult.Claimed)) {
        throw new IllegalStateException("a new record was not claimed: " + r);
      }
    }
  }

  private static DynamoDbClient client(int port) {
    return DynamoDbClient.builder()
        .endpointOverride(URI.create("http://127.0.0.1:" + port))
        .region(Region.US_EAST_1)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
        // The SDK's default pool: as many connections as the store's batch concurrency.
        .httpClientBuilder(ApacheHttpClient.builder().maxConnections(CONCURRENCY))
        .build();
  }

  private static double median(long[] values) {
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  }
}

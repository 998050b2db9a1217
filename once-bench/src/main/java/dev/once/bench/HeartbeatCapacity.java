package dev.once.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.Admission;
import dev.once.ExecutionPolicy;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Lease;
import dev.once.Once;
import dev.once.Recording;
import dev.once.Scope;
import dev.once.bench.jdbc.PostgresBench;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.store.redis.RedisStore;
import dev.once.tck.FaultyStore;
import dev.once.tck.FaultyStore.Call;
import dev.once.tck.LeaseWatch;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * How many leases the engine keeps alive on a real store made slow: N leases claimed through {@link
 * Once#begin}, held for two lease lengths while every heartbeat call pays an injected latency on
 * top of the store's own round trip, and retries try to steal random keys. Reports, per lease
 * length, the longest time any lease went without an extension (a lapse is one over the lease), the
 * steals and the leases reported lost, and the heartbeat calls made. Then, in the same run and with
 * no injected latency, the raw cost the batching saves: one batched heartbeat of 2,500 leases
 * against 2,500 single heartbeats, one round trip each.
 *
 * <pre>
 * java -cp once-bench/target/benchmarks.jar dev.once.bench.HeartbeatCapacity \
 *     memory|postgres|redis [leases] [latencyMillis] [leaseMillis...]
 * </pre>
 *
 * Defaults: 10,000 leases, 50 ms, leases of 1 s, 5 s and 30 s. PostgreSQL as in {@link
 * PostgresBench}; Redis on {@code redis://127.0.0.1:6379}.
 */
public final class HeartbeatCapacity {

  private static final Fingerprint FP = new Fingerprint(1, "00112233445566778899aabbccddeeff");
  private static final int RAW_BATCH = 2_500;

  private HeartbeatCapacity() {}

  public static void main(String[] args) throws Exception {
    String kind = args.length > 0 ? args[0] : "memory";
    int leases = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
    Duration latency = Duration.ofMillis(args.length > 2 ? Long.parseLong(args[2]) : 50);
    long[] leaseMillis =
        args.length > 3
            ? Arrays.stream(args, 3, args.length).mapToLong(Long::parseLong).toArray()
            : new long[] {1_000, 5_000, 30_000};
    try (Backend backend = Backend.of(kind)) {
      System.out.printf(
          Locale.ROOT,
          "%s store, %,d leases, +%d ms per heartbeat call%n",
          kind,
          leases,
          latency.toMillis());
      System.out.println(
          "lease | claim s | longest gap | gap/lease | steals | lost | heartbeat calls | leases/call");
      for (long millis : leaseMillis) {
        hold(backend.store(), leases, latency, Duration.ofMillis(millis));
      }
      raw(backend.store());
    }
  }

  private static void hold(IdempotencyStore real, int count, Duration latency, Duration leaseLength)
      throws Exception {
    LeaseWatch watch = LeaseWatch.wrap(real);
    FaultyStore slow = FaultyStore.wrap(watch).latency(latency, Call.HEARTBEAT);
    ExecutionPolicy policy = ExecutionPolicy.builder().lease(leaseLength).build();
    Scope scope = Scope.of("bench", UUID.randomUUID().toString());
    try (Once once = Once.of(slow)) {
      long claimStart = System.nanoTime();
      List<Lease> leases = claimAll(once, scope, count, policy);
      double claimSeconds = (System.nanoTime() - claimStart) / 1e9;
      int callsBefore = slow.calls(Call.HEARTBEAT);
      long until = System.nanoTime() + 2 * leaseLength.toNanos();
      int steals = 0;
      for (int attempt = 0; attempt < 1_000_000 && System.nanoTime() - until < 0; attempt++) {
        Lease victim = leases.get(ThreadLocalRandom.current().nextInt(leases.size()));
        RecordId id = RecordId.of(victim.scope(), victim.key());
        if (real.claim(new ClaimRequest(id, FP, leaseLength, policy.ttl()))
            instanceof ClaimResult.Claimed) {
          steals++;
        }
        TimeUnit.MILLISECONDS.sleep(2);
      }
      Duration gap = watch.longestGap(System.nanoTime());
      long lost = leases.stream().filter(Lease::leaseLost).count();
      int calls = slow.calls(Call.HEARTBEAT) - callsBefore;
      long ticks = 6; // two lease lengths at a third of a lease each
      System.out.printf(
          Locale.ROOT,
          "%5.1fs | %7.1f | %9d ms | %9.2f | %6d | %4d | %15d | %11.0f%n",
          leaseLength.toMillis() / 1000.0,
          claimSeconds,
          gap.toMillis(),
          gap.toNanos() / (double) leaseLength.toNanos(),
          steals,
          lost,
          calls,
          calls == 0 ? 0.0 : (double) count * ticks / calls);
      for (Lease lease : leases) {
        if (lease.release() != Recording.RELEASED && !lease.leaseLost()) {
          throw new IllegalStateException("could not release " + lease.key());
        }
      }
    }
  }

  private static List<Lease> claimAll(Once once, Scope scope, int count, ExecutionPolicy policy)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<Lease>> futures = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        IdempotencyKey key = IdempotencyKey.of("lease-" + i);
        futures.add(
            pool.submit(() -> ((Admission.Proceed) once.begin(scope, key, FP, policy)).lease()));
      }
      List<Lease> leases = new ArrayList<>(count);
      for (Future<Lease> future : futures) {
        leases.add(future.get(60, TimeUnit.SECONDS));
      }
      return leases;
    } finally {
      pool.shutdownNow();
    }
  }

  /** The store's own cost, no latency injected: one batched call against one call per lease. */
  private static void raw(IdempotencyStore store) {
    Scope scope = Scope.of("bench", UUID.randomUUID().toString());
    Duration lease = Duration.ofMinutes(5);
    List<LeaseToken> tokens = new ArrayList<>(RAW_BATCH);
    for (int i = 0; i < RAW_BATCH; i++) {
      RecordId id = RecordId.of(scope, IdempotencyKey.of("raw-" + i));
      ClaimResult.Claimed c =
          (ClaimResult.Claimed) store.claim(new ClaimRequest(id, FP, lease, Duration.ofHours(1)));
      tokens.add(new LeaseToken(id, c.token()));
    }
    double batched = Double.MAX_VALUE;
    double single = Double.MAX_VALUE;
    for (int round = 0; round < 5; round++) {
      long start = System.nanoTime();
      int extended = store.heartbeat(tokens, lease).size();
      batched = Math.min(batched, (System.nanoTime() - start) / 1e6);
      start = System.nanoTime();
      for (LeaseToken token : tokens) {
        store.heartbeat(token.id(), token.token(), lease);
      }
      single = Math.min(single, (System.nanoTime() - start) / 1e6);
      if (extended != RAW_BATCH) {
        throw new IllegalStateException("the batch extended " + extended + " of " + RAW_BATCH);
      }
    }
    System.out.printf(
        Locale.ROOT,
        "raw, best of 5: %,d leases in one batched call %.1f ms; one call each %.1f ms; ratio %.1fx%n",
        RAW_BATCH,
        batched,
        single,
        single / batched);
    for (LeaseToken token : tokens) {
      store.release(token.id(), token.token());
    }
  }

  /** The store under test and what it needs closed. */
  private interface Backend extends AutoCloseable {
    IdempotencyStore store();

    @Override
    void close();

    static Backend of(String kind) {
      return switch (kind) {
        case "memory" -> {
          InMemoryStore store = InMemoryStore.create();
          yield new Backend() {
            @Override
            public IdempotencyStore store() {
              return store;
            }

            @Override
            public void close() {}
          };
        }
        case "postgres" -> {
          HikariDataSource pool = PostgresBench.pool(24);
          IdempotencyStore store = PostgresBench.freshStore(pool);
          yield new Backend() {
            @Override
            public IdempotencyStore store() {
              return store;
            }

            @Override
            public void close() {
              store.close();
              pool.close();
            }
          };
        }
        case "redis" -> {
          RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
          RedisStore store = RedisStore.builder(client).keyPrefix("once-bench-hb:").build();
          yield new Backend() {
            @Override
            public IdempotencyStore store() {
              return store;
            }

            @Override
            public void close() {
              store.close();
              client.shutdown();
            }
          };
        }
        default ->
            throw new IllegalArgumentException(
                "store must be memory, postgres or redis; was " + kind);
      };
    }
  }
}

package dev.once.bench.messaging;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.Once;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.ConsumerStats;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Consumer throughput with Once against the bare consumer, on the same broker, in the same run: the
 * bare side is the same broker consumer (same prefetch, workers and acknowledgements) whose
 * processor runs the handler and acknowledges; the Once side puts {@link MessageIdempotency} in
 * between, twice: with {@code processAll} (a consumer's batch claimed in one call, outcomes
 * recorded without waiting for each) and one delivery at a time. Each round publishes {@code
 * messages} distinct messages to a fresh queue, starts the consumers and times until all are
 * acknowledged; each round starts with another side, so that load from other processes falls on all
 * alike. Prints each side's median messages per second and its ratio to bare.
 *
 * <p>Arguments: {@code rabbitmq|sqs memory|redis|postgres rounds messages consumers
 * [handlerMicros]}; the handler does nothing by default (the worst case for the ratio), or parks
 * for {@code handlerMicros} to stand for real work such as a downstream call.
 */
public final class ConsumerThroughput {

  private static final Acknowledgement ACK =
      new Acknowledgement.Ack(Acknowledgement.AckReason.PROCESSED);

  private ConsumerThroughput() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 5 && args.length != 6) {
      System.err.println(
          "usage: ConsumerThroughput rabbitmq|sqs memory|redis|postgres rounds messages consumers [handlerMicros]");
      System.exit(2);
    }
    int rounds = Integer.parseInt(args[2]);
    int messages = Integer.parseInt(args[3]);
    int consumers = Integer.parseInt(args[4]);
    long handlerNanos = args.length == 6 ? Long.parseLong(args[5]) * 1_000 : 0;
    List<AutoCloseable> resources = new ArrayList<>();
    try {
      IdempotencyStore store = store(args[1], resources);
      try (Broker<?> broker =
              args[0].equals("sqs") ? new SqsBroker() : new RabbitBroker(consumers);
          Once once = Once.of(store)) {
        run(broker, once, rounds, messages, consumers, handlerNanos, args);
      }
    } finally {
      for (AutoCloseable r : resources) {
        r.close();
      }
    }
  }

  private static <M> void run(
      Broker<M> broker,
      Once once,
      int rounds,
      int messages,
      int consumers,
      long handlerNanos,
      String[] args)
      throws Exception {
    LongAdder effects = new LongAdder();
    Runnable work =
        () -> {
          if (handlerNanos > 0) {
            LockSupport.parkNanos(handlerNanos);
          }
          effects.increment();
        };
    MessageProcessor<M> bare =
        m -> {
          work.run();
          return ACK;
        };
    MessageProcessor<M> guarded =
        MessageIdempotency.builder(once, broker.reader())
            .scope(Scope.of("bench", UUID.randomUUID().toString()))
            .build()
            .processor((m, ctx) -> work.run());
    // The same processor with processAll left to its default: each delivery claimed and recorded
    // on its own, as before the consumers handed their batches over. The "before" in this run.
    MessageProcessor<M> oneByOne = guarded::process;
    List<MessageProcessor<M>> sides = List.of(bare, oneByOne, guarded);
    String only = System.getProperty("once.bench.side");
    if (only != null) {
      // One side alone, for a profile of its CPU: bare, one (at a time) or batches.
      MessageProcessor<M> side = sides.get(List.of("bare", "one", "batches").indexOf(only));
      for (int i = 0; i <= rounds; i++) {
        System.out.printf("%s: %.0f msg/s%n", only, measure(broker, side, messages, consumers));
      }
      return;
    }
    // Warm-up: one round each, not counted.
    for (MessageProcessor<M> side : sides) {
      measure(broker, side, messages, consumers);
    }
    double[][] rates = new double[sides.size()][rounds];
    for (int i = 0; i < rounds; i++) {
      // Each round starts with another side, so that load from other processes falls on all alike.
      for (int j = 0; j < sides.size(); j++) {
        int side = (i + j) % sides.size();
        rates[side][i] = measure(broker, sides.get(side), messages, consumers);
      }
    }
    double bareMedian = median(rates[0]);
    System.out.printf(
        "%s store=%s rounds=%d messages=%d consumers=%d handler=%dus: bare %.0f msg/s, once one at a time %.0f msg/s (%.2f), once batches %.0f msg/s (%.2f)%n",
        args[0],
        args[1],
        rounds,
        messages,
        consumers,
        handlerNanos / 1000,
        bareMedian,
        median(rates[1]),
        median(rates[1]) / bareMedian,
        median(rates[2]),
        median(rates[2]) / bareMedian);
    System.out.println("  bare per round:    " + Arrays.toString(round(rates[0])));
    System.out.println("  one at a time:     " + Arrays.toString(round(rates[1])));
    System.out.println("  batches per round: " + Arrays.toString(round(rates[2])));
  }

  /** Messages per second to consume {@code messages} fresh messages. */
  private static <M> double measure(
      Broker<M> broker, MessageProcessor<M> processor, int messages, int consumers)
      throws Exception {
    String queue = broker.newQueue();
    try {
      broker.publish(queue, UUID.randomUUID().toString(), messages);
      long start = System.nanoTime();
      try (Broker.Consumers running = broker.consume(queue, processor, consumers)) {
        long deadline = start + Duration.ofMinutes(5).toNanos();
        while (acknowledged(running.stats().get()) < messages) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("consumers did not finish within 5 minutes");
          }
          Thread.sleep(1);
        }
        return messages / ((System.nanoTime() - start) / 1e9);
      }
    } finally {
      broker.deleteQueue(queue);
    }
  }

  private static long acknowledged(List<ConsumerStats> stats) {
    return stats.stream().mapToLong(s -> s.processed() + s.duplicates()).sum();
  }

  private static IdempotencyStore store(String name, List<AutoCloseable> resources) {
    if (name.endsWith("-single")) {
      // The same store behind a plain decorator, which does not batch: every consumer's claim and
      // completion is its own round trip, as before the engine gathered concurrent calls.
      IdempotencyStore store =
          store(name.substring(0, name.length() - "-single".length()), resources);
      return new ForwardingStore() {
        @Override
        protected IdempotencyStore delegate() {
          return store;
        }
      };
    }
    switch (name) {
      case "memory":
        return InMemoryStore.create();
      case "redis":
        {
          RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
          RedisStore store = RedisStore.builder(client).keyPrefix("once-bench-msg:").build();
          resources.add(0, store);
          resources.add(client::shutdown);
          return store;
        }
      case "postgres":
        {
          HikariConfig config = new HikariConfig();
          config.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
          config.setUsername("postgres");
          config.setMaximumPoolSize(8);
          HikariDataSource pool = new HikariDataSource(config);
          PostgresStore store =
              PostgresStore.builder(pool)
                  .tableName("once_bench_messages")
                  .autoCreateSchema(true)
                  .build();
          resources.add(0, store);
          resources.add(pool);
          return store;
        }
      default:
        throw new IllegalArgumentException("store must be memory, redis or postgres, was " + name);
    }
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static long[] round(double[] values) {
    return Arrays.stream(values).mapToLong(Math::round).toArray();
  }
}

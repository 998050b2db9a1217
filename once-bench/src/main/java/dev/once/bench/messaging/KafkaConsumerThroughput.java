package dev.once.bench.messaging;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.Once;
import dev.once.Scope;
import dev.once.kafka.KafkaBroker;
import dev.once.kafka.KafkaIdempotentConsumer;
import dev.once.kafka.KafkaRecords;
import dev.once.messaging.Acknowledgement;
import dev.once.messaging.MessageIdempotency;
import dev.once.messaging.MessageProcessor;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import io.lettuce.core.RedisClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Consumer throughput with Once against the bare consumer, on one in-JVM KRaft broker, in one run:
 * N records (distinct Idempotency-Key headers, 100-byte values) are produced once; then each round
 * consumes all of them from the start with a fresh group, one consumer: the bare {@link
 * KafkaConsumer} loop (poll, count, commitSync per batch), and {@link KafkaIdempotentConsumer} with
 * {@link MessageIdempotency} over the in-memory store, Redis and PostgreSQL (one claim and one
 * completion per record). Rounds are interleaved; medians are reported, with the ratio to bare.
 * Every side runs the same effect per record: nothing, or a pause of {@code effectMicros} standing
 * for the handler's own work (a database write, a call), since a consumer with Once does one store
 * round trip per record more than the bare one and the ratio depends on what else it does.
 *
 * <pre>
 * java -cp ... dev.once.bench.messaging.KafkaConsumerThroughput [records] [rounds] [effectMicros] [stores...]
 * </pre>
 *
 * Defaults: 20000 records, 3 rounds, no effect, stores {@code memory redis postgres} (Redis at
 * 127.0.0.1:6379, PostgreSQL at 127.0.0.1:5432/test).
 */
public final class KafkaConsumerThroughput {

  private static final String TOPIC = "bench-orders";

  private KafkaConsumerThroughput() {}

  public static void main(String[] args) throws Exception {
    int records = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    long effectNanos = args.length > 2 ? Long.parseLong(args[2]) * 1_000 : 0;
    List<String> stores =
        args.length > 3
            ? Arrays.asList(args).subList(3, args.length)
            : List.of("memory", "redis", "postgres");
    try (KafkaBroker broker = KafkaBroker.start()) {
      broker.createTopic(TOPIC, 4);
      produce(broker.bootstrapServers(), records);
      Map<String, Supplier<IdempotencyStore>> factories = new LinkedHashMap<>();
      List<AutoCloseable> resources = new ArrayList<>();
      for (String s : stores) {
        factories.put(s, storeFactory(s, resources));
      }
      Map<String, double[]> rates = new LinkedHashMap<>();
      rates.put("bare", new double[rounds]);
      factories
          .keySet()
          .forEach(
              s -> {
                rates.put(s + " 1-by-1", new double[rounds]);
                rates.put(s + " polls", new double[rounds]);
              });
      for (int round = -1; round < rounds; round++) { // round -1 warms up every side
        int r = Math.max(round, 0);
        rates.get("bare")[r] = bare(broker.bootstrapServers(), records, effectNanos);
        for (Map.Entry<String, Supplier<IdempotencyStore>> e : factories.entrySet()) {
          for (boolean polls : new boolean[] {false, true}) {
            Objects.requireNonNull(rates.get(e.getKey() + (polls ? " polls" : " 1-by-1")))[r] =
                guarded(broker.bootstrapServers(), records, effectNanos, e.getValue().get(), polls);
          }
        }
      }
      double bare = median(rates.get("bare"));
      System.out.printf(
          Locale.ROOT,
          "%d records, 4 partitions, 1 consumer, effect %d us, %d rounds (medians)%n",
          records,
          effectNanos / 1_000,
          rounds);
      System.out.println("consumer | records/s | ratio to bare");
      for (Map.Entry<String, double[]> e : rates.entrySet()) {
        double m = median(e.getValue());
        System.out.printf(Locale.ROOT, "%-8s | %9.0f | %5.2f%n", e.getKey(), m, m / bare);
      }
      for (AutoCloseable c : resources) {
        c.close();
      }
    }
  }

  private static Supplier<IdempotencyStore> storeFactory(
      String name, List<AutoCloseable> resources) {
    switch (name) {
      case "memory":
        return InMemoryStore::create;
      case "redis":
        {
          RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
          resources.add(client::shutdown);
          return () -> RedisStore.builder(client).keyPrefix("once-bench-kafka:").build();
        }
      case "postgres":
        {
          HikariConfig config = new HikariConfig();
          config.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
          config.setUsername("postgres");
          config.setPassword("");
          config.setMaximumPoolSize(4);
          HikariDataSource pool = new HikariDataSource(config);
          resources.add(pool);
          return () ->
              PostgresStore.builder(pool)
                  .tableName("once_bench_kafka")
                  .autoCreateSchema(true)
                  .build();
        }
      default:
        throw new IllegalArgumentException("store must be memory, redis or postgres; was " + name);
    }
  }

  private static void produce(String bootstrap, int n) throws Exception {
    byte[] value = "x".repeat(100).getBytes(StandardCharsets.UTF_8);
    try (KafkaProducer<byte[], byte[]> p =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.LINGER_MS_CONFIG,
                10),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (int i = 0; i < n; i++) {
        ProducerRecord<byte[], byte[]> r =
            new ProducerRecord<>(TOPIC, ("k" + i).getBytes(StandardCharsets.UTF_8), value);
        r.headers().add("Idempotency-Key", ("order-" + i).getBytes(StandardCharsets.UTF_8));
        p.send(r);
      }
      p.flush();
    }
  }

  private static Map<String, Object> config(String bootstrap) {
    return Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
        bootstrap,
        ConsumerConfig.GROUP_ID_CONFIG,
        "bench-" + System.nanoTime(),
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
        "earliest",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
        false);
  }

  /** The bare loop: poll, count each record, commitSync per batch. Records per second. */
  private static double bare(String bootstrap, int n, long effectNanos) {
    AtomicLong seen = new AtomicLong();
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(
            config(bootstrap), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      c.subscribe(List.of(TOPIC));
      long start = 0;
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
      while (seen.get() < n && System.nanoTime() < deadline) {
        ConsumerRecords<byte[], byte[]> batch = c.poll(Duration.ofMillis(100));
        if (start == 0 && !batch.isEmpty()) {
          start = System.nanoTime();
        }
        for (ConsumerRecord<byte[], byte[]> r : batch) {
          effect(effectNanos);
          seen.addAndGet(r.value().length > 0 ? 1 : 0);
        }
        c.commitSync();
      }
      return n / ((System.nanoTime() - start) / 1e9);
    }
  }

  /**
   * The Once consumer over {@code store}, records per second: one record at a time (a claim and a
   * completion each, waited for in turn) or, with {@code polls}, a partition's poll at a time (one
   * claim call per poll, completions not waited for one by one: {@code processAll}).
   */
  private static double guarded(
      String bootstrap, int n, long effectNanos, IdempotencyStore store, boolean polls)
      throws Exception {
    AtomicLong seen = new AtomicLong();
    AtomicLong start = new AtomicLong();
    try (Once once = Once.of(store)) {
      MessageProcessor<ConsumerRecord<byte[], byte[]>> processor =
          MessageIdempotency.builder(once, KafkaRecords.READER)
              .scope(Scope.of("bench", Long.toString(System.nanoTime())))
              .build()
              .processor(
                  (record, context) -> {
                    effect(effectNanos);
                    seen.incrementAndGet();
                  });
      MessageProcessor<ConsumerRecord<byte[], byte[]>> timed =
          new MessageProcessor<>() {
            @Override
            public Acknowledgement process(ConsumerRecord<byte[], byte[]> record) {
              start.compareAndSet(0, System.nanoTime());
              return processor.process(record);
            }

            @Override
            public List<Acknowledgement> processAll(List<ConsumerRecord<byte[], byte[]>> records) {
              if (!polls) {
                return MessageProcessor.super.processAll(records);
              }
              start.compareAndSet(0, System.nanoTime());
              return processor.processAll(records);
            }
          };
      try (KafkaIdempotentConsumer c =
          KafkaIdempotentConsumer.builder(config(bootstrap), List.of(TOPIC), timed)
              .pollTimeout(Duration.ofMillis(100))
              .start()) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (seen.get() < n && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        return n / ((System.nanoTime() - start.get()) / 1e9);
      }
    }
  }

  private static void effect(long nanos) {
    if (nanos > 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(nanos);
    }
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}

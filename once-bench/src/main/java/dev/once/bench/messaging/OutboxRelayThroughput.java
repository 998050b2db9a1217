package dev.once.bench.messaging;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.kafka.KafkaBroker;
import dev.once.kafka.KafkaDelivery;
import dev.once.outbox.Delivery;
import dev.once.outbox.DeliveryOutcome;
import dev.once.outbox.HttpDelivery;
import dev.once.outbox.Outbox;
import dev.once.outbox.OutboxMessage;
import dev.once.outbox.OutboxRelay;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Outbox relay throughput on PostgreSQL: N rows are enqueued (committed), then relays with {@code
 * workers} threads and batches of 100 deliver all of them; rows per second from the first claim to
 * the last recorded outcome. Destinations: a no-op delivery (the relay's own database cost: claim
 * and record), HTTP to a loopback Jetty servlet answering 204, and Kafka (idempotent producer,
 * acks=all) to an in-JVM KRaft broker.
 *
 * <pre>
 * java -cp ... dev.once.bench.messaging.OutboxRelayThroughput [rows] [workers]
 * </pre>
 *
 * Defaults: 10000 rows, 2 workers; PostgreSQL at 127.0.0.1:5432/test.
 */
public final class OutboxRelayThroughput {

  private OutboxRelayThroughput() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int workers = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/test");
    config.setUsername("postgres");
    config.setPassword("");
    config.setMaximumPoolSize(workers + 2);
    Server jetty = jetty();
    try (HikariDataSource pool = new HikariDataSource(config);
        KafkaBroker broker = KafkaBroker.start()) {
      broker.createTopic("bench-outbox", 4);
      Outbox outbox =
          Outbox.postgres(pool).tableName("once_bench_outbox").autoCreateSchema(true).build();
      URI base =
          URI.create(
              "http://127.0.0.1:"
                  + ((ServerConnector) jetty.getConnectors()[0]).getLocalPort()
                  + "/");
      try (HttpDelivery http = HttpDelivery.builder().baseUri(base).threads(2).build();
          KafkaDelivery kafka =
              KafkaDelivery.create(Map.of("bootstrap.servers", broker.bootstrapServers()))) {
        Delivery noop = pending -> CompletableFuture.completedFuture(DeliveryOutcome.DELIVERED);
        System.out.printf(
            Locale.ROOT,
            "%d rows, 1 relay, %d workers, batches of 100, PostgreSQL%n",
            rows,
            workers);
        System.out.println("destination | rows/s");
        run(pool, outbox, noop, "none", rows / 5, workers); // warm-up
        run(pool, outbox, http, "http", rows / 5, workers);
        run(pool, outbox, kafka, "bench-outbox", rows / 5, workers);
        print("no-op", run(pool, outbox, noop, "none", rows, workers));
        print("HTTP", run(pool, outbox, http, "http", rows, workers));
        print("Kafka", run(pool, outbox, kafka, "bench-outbox", rows, workers));
      }
    } finally {
      jetty.stop();
    }
  }

  private static void print(String destination, double rate) {
    System.out.printf(Locale.ROOT, "%-11s | %6.0f%n", destination, rate);
  }

  private static double run(
      HikariDataSource pool,
      Outbox outbox,
      Delivery delivery,
      String destination,
      int rows,
      int workers)
      throws Exception {
    execute(pool, "TRUNCATE once_bench_outbox");
    List<OutboxMessage> messages = new ArrayList<>(rows);
    byte[] payload =
        "{\"amount\":100,\"currency\":\"EUR\",\"account\":\"acct-1\"}"
            .getBytes(StandardCharsets.UTF_8);
    long run = System.nanoTime();
    for (int i = 0; i < rows; i++) {
      messages.add(
          OutboxMessage.builder("m-" + run + "-" + i, destination)
              .key("k" + (i % 64))
              .payload(payload)
              .build());
    }
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueueAll(c, messages);
      c.commit();
    }
    long start = System.nanoTime();
    try (OutboxRelay relay =
        outbox
            .relay(delivery)
            .workers(workers)
            .batchSize(100)
            .pollInterval(Duration.ofMillis(5))
            .purge(false)
            .build()) {
      relay.start();
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
      while (delivered(pool) < rows && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
    }
    return rows / ((System.nanoTime() - start) / 1e9);
  }

  private static long delivered(HikariDataSource pool) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT count(*) FROM once_bench_outbox WHERE state = 'DELIVERED'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void execute(HikariDataSource pool, String sql) throws Exception {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  private static Server jetty() throws Exception {
    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(
        new ServletHolder(
            new HttpServlet() {
              @Override
              protected void doPost(HttpServletRequest req, HttpServletResponse resp)
                  throws IOException {
                req.getInputStream().readAllBytes();
                resp.setStatus(204);
              }
            }),
        "/*");
    server.setHandler(context);
    server.start();
    return server;
  }
}

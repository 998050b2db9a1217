package dev.once.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A deliberately <em>non-idempotent</em> payments service, to show what the gateway prevents: every
 * {@code POST /charges} creates a new charge with a new id and appends it to a ledger, however
 * often the same request is sent. Loopback only; in memory; for demos and tests.
 *
 * <ul>
 *   <li>{@code POST /charges[?delay=ms]}: creates a charge, answers 201 with its JSON; {@code
 *       delay} (at most 60000) makes it slow, to show a duplicate arriving while the first is in
 *       flight;
 *   <li>{@code GET /ledger}: every charge created so far, as a JSON array;
 *   <li>{@code GET|POST /ping}: a fixed small body, for benchmarks.
 * </ul>
 *
 * <p>Package-private: it ships in the gateway jar for {@code --demo} and the benchmark scripts, but
 * demo code is no part of the gateway's API.
 */
final class DemoUpstream implements AutoCloseable {

  /** The longest {@code ?delay=} honoured, so no request can hold a thread for long. */
  static final long MAX_DELAY_MS = 60_000;

  /**
   * The most charges kept; the ledger of a demo never needs more, and a load test cannot exhaust
   * memory.
   */
  static final int MAX_LEDGER = 100_000;

  private static final byte[] PONG = "{\"pong\":true}".getBytes(StandardCharsets.UTF_8);

  private final HttpServer server;
  private final ExecutorService executor;
  private final AtomicLong ids = new AtomicLong();
  private final AtomicLong created = new AtomicLong();
  private final List<String> ledger = new ArrayList<>();

  private DemoUpstream(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /** Starts on {@code 127.0.0.1:port}; port 0 picks a free one. */
  public static DemoUpstream start(int port) throws IOException {
    // The JDK server writes headers and body separately; without TCP_NODELAY every response waits
    // ~40 ms for the client's delayed ACK. Read once, when the JVM's first HttpServer is made.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1024);
    ExecutorService executor =
        Executors.newFixedThreadPool(
            64,
            r -> {
              Thread t = new Thread(r, "demo-upstream");
              t.setDaemon(true);
              return t;
            });
    DemoUpstream upstream = new DemoUpstream(server, executor);
    server.createContext("/charges", upstream::charges);
    server.createContext("/ledger", upstream::ledger);
    server.createContext("/ping", upstream::ping);
    server.setExecutor(executor);
    server.start();
    return upstream;
  }

  /** {@code java -cp once-gateway.jar dev.once.gateway.DemoUpstream [port]} (default 9000). */
  public static void main(String[] args) throws IOException {
    DemoUpstream upstream = start(args.length > 0 ? Integer.parseInt(args[0]) : 9000);
    System.out.println("demo upstream on http://127.0.0.1:" + upstream.port());
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** How many charges were created: with the gateway in front, once per idempotency key. */
  public long chargesCreated() {
    return created.get();
  }

  private void charges(HttpExchange ex) throws IOException {
    try (ex) {
      if (!ex.getRequestMethod().equals("POST")) {
        send(ex, 405, "{\"error\":\"POST only\"}");
        return;
      }
      byte[] body;
      try (InputStream in = ex.getRequestBody()) {
        body = in.readNBytes(64 * 1024);
      }
      sleep(delayOf(ex.getRequestURI().getRawQuery()));
      long id = ids.incrementAndGet();
      created.incrementAndGet();
      String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
      String charge =
          "{\"id\":\"ch_"
              + id
              + "\",\"request\":"
              + jsonOrString(body)
              + ",\"idempotency_key\":"
              + (key == null ? "null" : quote(key))
              + "}";
      synchronized (ledger) {
        if (ledger.size() < MAX_LEDGER) {
          ledger.add(charge);
        }
      }
      ex.getResponseHeaders().add("Location", "/charges/ch_" + id);
      send(ex, 201, charge);
    }
  }

  private void ledger(HttpExchange ex) throws IOException {
    try (ex) {
      String json;
      synchronized (ledger) {
        json =
            "{\"charges\":"
                + ledger.size()
                + ",\"ledger\":[\n  "
                + String.join(",\n  ", ledger)
                + "\n]}";
      }
      send(ex, 200, json + "\n");
    }
  }

  private void ping(HttpExchange ex) throws IOException {
    try (ex) {
      ex.getRequestBody().readAllBytes();
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(200, PONG.length);
      ex.getResponseBody().write(PONG);
    }
  }

  private static long delayOf(String query) {
    if (query == null) {
      return 0;
    }
    for (String pair : query.split("&")) {
      if (pair.startsWith("delay=")) {
        try {
          return Math.max(0, Math.min(MAX_DELAY_MS, Long.parseLong(pair.substring(6))));
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }

  private static void sleep(long ms) {
    if (ms > 0) {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The body as a JSON string: the demo never parses, so a malformed body cannot break the ledger.
   */
  private static String jsonOrString(byte[] body) {
    return quote(new String(body, StandardCharsets.UTF_8).trim());
  }

  private static String quote(String s) {
    return "\""
        + s.replace("\\", "\\\\").replace("\"", "\\\"").replaceAll("[\\x00-\\x1f]", " ")
        + "\"";
  }

  private static void send(HttpExchange ex, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, bytes.length);
    ex.getResponseBody().write(bytes);
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}

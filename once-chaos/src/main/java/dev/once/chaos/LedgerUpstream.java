package dev.once.chaos;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The upstream behind the gateway: a payments ledger on loopback that records every request it
 * receives ({@code POST /charges}, body {@code {"amount":N}}), with the forwarded {@code
 * Idempotency-Key} and {@code Once-Token} and the time it arrived.
 *
 * <p>{@link Mode#NAIVE}: deliberately not idempotent, every delivery is a new charge (an effect).
 * {@link Mode#CHAINED}: key chaining as {@code docs/gateway.md} recommends: a repeated key gets its
 * first charge back and creates none. Either way every delivery is recorded, so the audit sees how
 * often the gateway forwarded each operation. {@code ?delay=ms} makes a request slow.
 */
final class LedgerUpstream implements AutoCloseable {

  enum Mode {
    NAIVE,
    CHAINED
  }

  /** One request as it reached the ledger. */
  record Delivery(String key, long token, long amount, long atNanos, boolean charged) {}

  private static final Pattern AMOUNT = Pattern.compile("\"amount\"\\s*:\\s*(\\d+)");
  private static final Pattern DELAY = Pattern.compile("delay=(\\d{1,9})");
  private static final long MAX_DELAY_MS = 60_000;

  private final Mode mode;
  private final HttpServer server;
  private final ExecutorService executor;
  private final Map<Long, List<Delivery>> deliveries = new HashMap<>();
  private final Map<String, String> chargeOfKey = new HashMap<>();
  private long charges;

  private LedgerUpstream(Mode mode) throws IOException {
    this.mode = mode;
    this.server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 512);
    this.executor =
        Executors.newFixedThreadPool(
            64,
            r -> {
              Thread t = new Thread(r, "ledger-upstream");
              t.setDaemon(true);
              return t;
            });
    server.createContext("/charges", this::charge);
    server.setExecutor(executor);
  }

  static LedgerUpstream start(Mode mode) throws IOException {
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }
    LedgerUpstream upstream = new LedgerUpstream(mode);
    upstream.server.start();
    return upstream;
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  Mode mode() {
    return mode;
  }

  private void charge(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body;
      try (InputStream in = ex.getRequestBody()) {
        body = in.readNBytes(64 * 1024);
      }
      Matcher m = AMOUNT.matcher(new String(body, StandardCharsets.UTF_8));
      boolean valid = ex.getRequestMethod().equals("POST") && m.find();
      String answer =
          valid
              ? record(ex, Long.parseLong(m.group(1)))
              : "{\"error\":\"POST {\\\"amount\\\":N}\"}";
      byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(valid ? 201 : 400, bytes.length);
      ex.getResponseBody().write(bytes);
    }
  }

  /** Records the delivery after the requested delay; returns the charge to answer with. */
  private String record(HttpExchange ex, long amount) {
    delay(ex.getRequestURI().getRawQuery());
    String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
    String tokenHeader = ex.getRequestHeaders().getFirst("Once-Token");
    long token = tokenHeader == null ? -1 : Long.parseLong(tokenHeader);
    synchronized (this) {
      String first = key == null ? null : chargeOfKey.get(key);
      boolean charged = mode == Mode.NAIVE || first == null;
      String charge =
          charged || first == null
              ? "{\"id\":\"ch_" + (++charges) + "\",\"amount\":" + amount + "}"
              : first;
      if (charged && key != null) {
        chargeOfKey.putIfAbsent(key, charge);
      }
      deliveries
          .computeIfAbsent(amount, a -> new ArrayList<>())
          .add(new Delivery(key, token, amount, System.nanoTime(), charged));
      return charge;
    }
  }

  /** Every delivery so far, by amount (the harness gives every operation its own amount). */
  synchronized Map<Long, List<Delivery>> deliveries() {
    Map<Long, List<Delivery>> copy = new HashMap<>();
    deliveries.forEach((k, v) -> copy.put(k, List.copyOf(v)));
    return copy;
  }

  /** Sleeps for the request's {@code ?delay=ms}, at most a minute. */
  private static void delay(String query) {
    Matcher m = DELAY.matcher(query == null ? "" : query);
    if (m.matches()) {
      try {
        Thread.sleep(Math.min(MAX_DELAY_MS, Long.parseLong(m.group(1))));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}

package dev.once.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An upstream whose behaviour is chosen by the path, counting how often each path ran: {@code
 * /status/NNN} answers NNN, {@code /slow/MS} answers 201 after MS milliseconds, {@code /big/N}
 * answers N bytes, {@code /headers} echoes the key-chaining headers, {@code /reset} reads the
 * request and drops the connection, {@code /fat-headers/N} is a payment with an {@code X-Fat}
 * header of N bytes; anything else is a payment: 201 with a new id.
 */
final class FakeUpstream implements AutoCloseable {

  private static final java.util.Set<String> KINDS =
      java.util.Set.of("status", "slow", "big", "headers", "reset", "fat-headers");

  private final HttpServer server;
  private final ExecutorService executor =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "fake-upstream");
            t.setDaemon(true);
            return t;
          });
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();

  FakeUpstream() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** How often a request reached this path. */
  int runs(String path) {
    AtomicInteger n = runs.get(path);
    return n == null ? 0 : n.get();
  }

  private void handle(HttpExchange ex) throws IOException {
    String path = ex.getRequestURI().getPath();
    runs.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    byte[] request = ex.getRequestBody().readAllBytes();
    // A route prefix (/small/big/10000) may stand before the behaviour.
    String[] all = path.split("/");
    int i = 1;
    while (i < all.length - 1 && !KINDS.contains(all[i])) {
      i++;
    }
    String kind = i < all.length ? all[i] : "";
    String arg = i + 1 < all.length ? all[i + 1] : "0";
    switch (kind) {
      case "status" -> send(ex, Integer.parseInt(arg), "{\"status\":" + arg + "}");
      case "slow" -> {
        sleep(Long.parseLong(arg));
        payment(ex, request);
      }
      case "big" -> big(ex, Long.parseLong(arg));
      case "headers" ->
          send(
              ex,
              200,
              "key="
                  + ex.getRequestHeaders().getFirst("Idempotency-Key")
                  + " scope="
                  + ex.getRequestHeaders().getFirst("Once-Scope")
                  + " token="
                  + ex.getRequestHeaders().getFirst("Once-Token")
                  + " vendor-key="
                  + ex.getRequestHeaders().getFirst("X-Idempotency-Key")
                  + " traceparent="
                  + ex.getRequestHeaders().getFirst("traceparent"));
      case "fat-headers" -> {
        ex.getResponseHeaders().add("X-Fat", "f".repeat(Integer.parseInt(arg)));
        payment(ex, request);
      }
      case "reset" -> {
        // The request arrived; the upstream dies before answering.
        ex.close();
      }
      default -> payment(ex, request);
    }
  }

  private void payment(HttpExchange ex, byte[] request) throws IOException {
    int id = ids.incrementAndGet();
    ex.getResponseHeaders().add("Location", "/payments/pay_" + id);
    ex.getResponseHeaders().add("X-Multi", "one");
    ex.getResponseHeaders().add("X-Multi", "two");
    ex.getResponseHeaders().add("Set-Cookie", "session=s" + id);
    send(ex, 201, "{\"id\":\"pay_" + id + "\",\"received_bytes\":" + request.length + "}");
  }

  /** {@code n} bytes of {@code x}, written as they are taken, so a big body costs no memory. */
  private static void big(HttpExchange ex, long n) throws IOException {
    byte[] chunk = "x".repeat(64 << 10).getBytes(StandardCharsets.US_ASCII);
    ex.sendResponseHeaders(200, n);
    try (java.io.OutputStream out = ex.getResponseBody()) {
      for (long left = n; left > 0; left -= chunk.length) {
        out.write(chunk, 0, (int) Math.min(chunk.length, left));
      }
    }
  }

  private static void send(HttpExchange ex, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
    if (bytes.length > 0) {
      ex.getResponseBody().write(bytes);
    }
    ex.close();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}

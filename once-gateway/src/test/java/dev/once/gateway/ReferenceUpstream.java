package dev.once.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.once.http.kit.ReferenceApi;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The kit's {@link ReferenceApi} as the upstream of a gateway: a handler that throws is answered
 * 500, as the upstream's own framework would.
 */
final class ReferenceUpstream implements AutoCloseable {

  final ReferenceApi api = new ReferenceApi();
  private final HttpServer server;
  private final ExecutorService executor =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "reference-upstream");
            t.setDaemon(true);
            return t;
          });

  ReferenceUpstream() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange ex) throws IOException {
    ReferenceApi.Reply reply;
    try {
      reply =
          api.handle(
              new ReferenceApi.Call(
                  ex.getRequestMethod(),
                  ex.getRequestURI().getPath(),
                  ex.getRequestURI().getRawQuery(),
                  ex.getRequestBody().readAllBytes()));
    } catch (ReferenceApi.HandlerFailure e) {
      reply =
          new ReferenceApi.Reply(
              500,
              List.of(Map.entry("Content-Type", "text/plain")),
              "internal error".getBytes(StandardCharsets.US_ASCII));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ex.close();
      return;
    }
    for (Map.Entry<String, String> h : reply.headers()) {
      ex.getResponseHeaders().add(h.getKey(), h.getValue());
    }
    ex.sendResponseHeaders(reply.status(), reply.body().length == 0 ? -1 : reply.body().length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(reply.body());
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}

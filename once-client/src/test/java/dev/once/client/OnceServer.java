package dev.once.client;

import dev.once.ExecutionPolicy;
import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.http.RoutePolicy;
import dev.once.servlet.OnceFilter;
import dev.once.store.InMemoryStore;
import jakarta.servlet.DispatcherType;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A real Once server on loopback: Jetty 12 with {@link OnceFilter} over an in-memory store, in
 * front of a {@link CountingServlet}. Routes: {@code /slow/**} has a 2 s lease (so a duplicate in
 * flight is told to come back within 2 s); {@code /small/**} stores at most 16 bytes of response.
 */
final class OnceServer implements AutoCloseable {

  final CountingServlet app = new CountingServlet();
  private final Once once = Once.of(InMemoryStore.create());
  private final Server jetty;
  private final int port;

  private OnceServer() throws Exception {
    HttpIdempotency http =
        HttpIdempotency.builder(once)
            .route(
                "/slow/**",
                RoutePolicy.builder()
                    .execution(ExecutionPolicy.builder().lease(Duration.ofSeconds(2)).build())
                    .build())
            .route(
                "/small/**",
                RoutePolicy.builder()
                    .execution(ExecutionPolicy.builder().maxResultBytes(16).build())
                    .build())
            .build();
    QueuedThreadPool threads = new QueuedThreadPool(32, 4);
    threads.setName("once-server");
    jetty = new Server(threads);
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    FilterHolder filter = new FilterHolder(OnceFilter.of(http));
    filter.setAsyncSupported(true);
    context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    context.addServlet(new ServletHolder(app), "/*");
    jetty.setHandler(context);
    jetty.start();
    port = connector.getLocalPort();
  }

  static OnceServer start() throws Exception {
    return new OnceServer();
  }

  int port() {
    return port;
  }

  /** {@code path} on this server, or through a proxy listening on {@code viaPort}. */
  static URI uri(int viaPort, String path) {
    return URI.create("http://127.0.0.1:" + viaPort + path);
  }

  URI uri(String path) {
    return uri(port, path);
  }

  @Override
  public void close() {
    try {
      jetty.stop();
    } catch (Exception e) {
      throw new IllegalStateException("Jetty did not stop", e);
    } finally {
      once.close();
    }
  }
}

package dev.once.outbox;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.http.ScopeResolver;
import dev.once.servlet.OnceFilter;
import dev.once.store.InMemoryStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The service an outbox delivers to: Jetty 12 on a loopback port, {@link OnceFilter} in front, and
 * a servlet whose effect is counting. {@code arrivals} counts every request per Idempotency-Key
 * (before the filter), {@code effects} every execution (behind it).
 *
 * <ul>
 *   <li>{@code POST /apply} applies the effect and answers 201;
 *   <li>{@code POST /status/<code>} answers that status (with {@code Retry-After: 1} for 503), no
 *       effect.
 * </ul>
 */
final class Downstream implements AutoCloseable {

  final Map<String, AtomicInteger> arrivals = new ConcurrentHashMap<>();
  final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  final AtomicInteger totalEffects = new AtomicInteger();
  private final Once once = Once.of(InMemoryStore.create());
  private final Server server;
  private final URI base;
  private volatile int holdAt = Integer.MAX_VALUE;
  private final CountDownLatch held = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);

  private Downstream() throws Exception {
    QueuedThreadPool threads = new QueuedThreadPool(64, 4);
    threads.setName("downstream");
    server = new Server(threads);
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.setContextPath("/");
    Filter counting =
        (request, response, chain) -> {
          String key = ((HttpServletRequest) request).getHeader(Outbox.IDEMPOTENCY_KEY_HEADER);
          if (key != null) {
            arrivals.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
          }
          chain.doFilter(request, response);
        };
    context.addFilter(new FilterHolder(counting), "/*", EnumSet.of(DispatcherType.REQUEST));
    HttpIdempotency http = HttpIdempotency.builder(once).scope(ScopeResolver.global()).build();
    context.addFilter(
        new FilterHolder(OnceFilter.of(http)), "/*", EnumSet.of(DispatcherType.REQUEST));
    context.addServlet(new ServletHolder(new Effects()), "/*");
    server.setHandler(context);
    server.start();
    base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
  }

  static Downstream start() throws Exception {
    return new Downstream();
  }

  URI base() {
    return base;
  }

  /** The {@code n}-th effect, once applied, holds its request open until {@link #release()}. */
  void holdAt(int n) {
    holdAt = n;
  }

  boolean awaitHeld(int seconds) throws InterruptedException {
    return held.await(seconds, TimeUnit.SECONDS);
  }

  void release() {
    release.countDown();
  }

  int arrivals(String key) {
    AtomicInteger n = arrivals.get(key);
    return n == null ? 0 : n.get();
  }

  int effects(String key) {
    AtomicInteger n = effects.get(key);
    return n == null ? 0 : n.get();
  }

  @Override
  public void close() throws Exception {
    release.countDown();
    server.stop();
    once.close();
  }

  private final class Effects extends HttpServlet {
    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      req.getInputStream().readAllBytes();
      String path = req.getRequestURI();
      if (path.startsWith("/status/")) {
        int status = Integer.parseInt(path.substring("/status/".length()));
        if (status == 503) {
          resp.setHeader("Retry-After", "1");
        }
        resp.setStatus(status);
        return;
      }
      String key = req.getHeader(Outbox.IDEMPOTENCY_KEY_HEADER);
      effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      if (totalEffects.incrementAndGet() == holdAt) {
        held.countDown();
        try {
          release.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      resp.setStatus(201);
      resp.getWriter().write("{\"applied\":true}");
    }
  }
}

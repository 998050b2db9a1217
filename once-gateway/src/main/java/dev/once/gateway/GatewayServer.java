package dev.once.gateway;

import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.Purger;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The two ports of a gateway, each with threads of its own:
 *
 * <ul>
 *   <li>the <b>proxy</b>, whose only work is the {@link ProxyHandler} chain, on the configured core
 *       ({@link ProxyPort}: {@link JettyPort} or {@link NettyProxy});
 *   <li>the <b>management</b> server (Jetty) with {@code /health}, {@code /metrics} and, when a
 *       token is configured, {@code /admin} and the {@code /console} over both: servlets, which may
 *       block, kept apart so that they neither make the proxy's handler tree blocking nor share its
 *       threads. Whatever clients do on the proxy port, {@code /health} answers.
 * </ul>
 *
 * Two servers rather than two connectors of one: Jetty decides how to run a request from the
 * invocation type of the whole handler tree, and one blocking servlet would make it hand off every
 * proxied request.
 */
final class GatewayServer {

  final ProxyPort proxy;
  final Server management;

  /** Both servers' access lines, written once both have stopped; null without an access log. */
  private final @Nullable AccessLines accessLines;

  private GatewayServer(ProxyPort proxy, Server management, @Nullable AccessLines accessLines) {
    this.proxy = proxy;
    this.management = management;
    this.accessLines = accessLines;
  }

  /**
   * What is told of every proxied request: its timer, and its access line with {@code accessLines}.
   */
  static ProxyLog proxyLog(PrometheusMeterRegistry registry, @Nullable AccessLines accessLines) {
    ProxyLog metrics = new RequestMetrics(registry);
    return accessLines != null ? ProxyLog.both(new AccessLog(accessLines), metrics) : metrics;
  }

  /** The management server beside {@code proxy}, which is not started yet ({@link #start}). */
  static GatewayServer create(
      GatewayConfig config,
      ProxyPort proxy,
      @Nullable AccessLines accessLines,
      IdempotencyStore store,
      Purger purger,
      PrometheusMeterRegistry registry) {
    QueuedThreadPool managementThreads = new QueuedThreadPool(16, 2);
    managementThreads.setName("once-management");
    Server management = new Server(managementThreads);
    ServerConnector managementConnector =
        new ServerConnector(management, 1, 1, new HttpConnectionFactory(httpConfiguration()));
    bind(managementConnector, config.bind(), config.managementPort());
    management.addConnector(managementConnector);
    ServletContextHandler servlets =
        new ServletContextHandler("/", ServletContextHandler.NO_SESSIONS);
    servlets.addServlet(new ServletHolder("health", new HealthServlet(store)), "/health");
    servlets.addServlet(new ServletHolder("metrics", new MetricsServlet(registry)), "/metrics");
    servlets.addServlet(new ServletHolder("not-found", new NotFoundServlet()), "/");
    if (config.adminToken() != null) {
      servlets.addServlet(
          new ServletHolder(
              "admin", new AdminServlet(store, purger, new AdminToken(config.adminToken()))),
          "/admin/*");
      // The console's data calls go to /metrics and /admin: without a token it would be an empty
      // shell, so it is mounted with the admin API or not at all.
      servlets.addServlet(new ServletHolder("console", new ConsoleServlet()), "/console/*");
    }
    management.setHandler(servlets);
    if (accessLines != null) {
      management.setRequestLog(new AccessLog(accessLines).jetty());
    }
    Metrics.bindJvm(registry);
    return new GatewayServer(proxy, management, accessLines);
  }

  /**
   * Starts the management server first: once the proxy accepts requests, {@code /health} answers.
   */
  void start(ProxyHandler chain) throws Exception {
    if (accessLines != null) {
      accessLines.start();
    }
    management.start();
    proxy.start(chain);
  }

  /**
   * Stops the proxy gracefully (requests in flight get the stop timeout), then the management
   * server, then writes the access lines still waiting; failures are added to {@code into}.
   */
  void stop(Throwable into) {
    try {
      proxy.stop();
    } catch (Exception e) {
      into.addSuppressed(e);
    }
    try {
      management.stop();
    } catch (Exception e) {
      into.addSuppressed(e);
    }
    if (accessLines != null) {
      accessLines.close();
    }
  }

  void join() throws InterruptedException {
    proxy.join();
  }

  int port() {
    return proxy.port();
  }

  int managementPort() {
    return ((ServerConnector) management.getConnectors()[0]).getLocalPort();
  }

  static HttpConfiguration httpConfiguration() {
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    return http;
  }

  static void bind(ServerConnector connector, String host, int port) {
    connector.setHost(host);
    connector.setPort(port);
  }
}

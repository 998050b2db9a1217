package dev.once.gateway;

import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.Purger;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The two Jetty servers of a gateway, each with threads of its own:
 *
 * <ul>
 *   <li>the <b>proxy</b>, whose only handler is the {@link ProxyHandler} chain (Jetty core, no
 *       servlet layer). The chain never blocks, and says so, so Jetty runs it on the thread that
 *       parsed the request instead of handing every request to another thread. Its selectors also
 *       carry the upstream client's connections ({@link ProxyConnector});
 *   <li>the <b>management</b> server with {@code /health}, {@code /metrics} and, when a token is
 *       configured, {@code /admin} and the {@code /console} over both: servlets, which may block,
 *       kept apart so that they neither make the proxy's handler tree blocking nor share its
 *       threads. Whatever clients do on the proxy port, {@code /health} answers.
 * </ul>
 *
 * Two servers rather than two connectors of one: Jetty decides how to run a request from the
 * invocation type of the whole handler tree, and one blocking servlet would make it hand off every
 * proxied request.
 */
final class GatewayServer {

  final Server proxy;
  final Server management;

  /** Both servers' access lines, written once both have stopped; null without an access log. */
  private final @Nullable AccessLines accessLines;

  private GatewayServer(Server proxy, Server management, @Nullable AccessLines accessLines) {
    this.proxy = proxy;
    this.management = management;
    this.accessLines = accessLines;
  }

  /** Both servers, the proxy without its handler yet ({@link #serve}). */
  static GatewayServer create(
      GatewayConfig config,
      IdempotencyStore store,
      Purger purger,
      PrometheusMeterRegistry registry) {
    QueuedThreadPool threads = new ProxyThreads(200, 8);
    threads.setName("once-gateway");
    Server proxy = new Server(threads);
    proxy.setStopTimeout(config.stopTimeout().toMillis());
    proxy.setErrorHandler(new ProblemErrors());
    HttpConfiguration proxyHttp = httpConfiguration();
    // One header limit on every hop (DESIGN §4): what a client may send, what the upstream client
    // can forward and what an upstream may answer; a response adds at most the slack on its way
    // back.
    proxyHttp.setRequestHeaderSize(config.maxHeaderBytes());
    proxyHttp.setResponseHeaderSize(config.maxHeaderBytes() + UpstreamFields.HEADER_SLACK);
    ServerConnector proxyConnector =
        new ProxyConnector(proxy, new HttpConnectionFactory(proxyHttp));
    bind(proxyConnector, config.bind(), config.port());
    // A client waiting for a slow upstream is silent: it must get the 504, not a connection cut
    // first.
    proxyConnector.setIdleTimeout(Math.max(30_000, config.upstreamTimeout().toMillis() + 5_000));
    proxy.addConnector(proxyConnector);
    RequestLog metrics = new RequestMetrics(registry);
    AccessLines accessLines = config.accessLog() ? AccessLines.toStandardOutput() : null;
    if (accessLines != null) {
      Metrics.bindAccessLines(registry, accessLines);
    }
    proxy.setRequestLog(
        accessLines != null
            ? new RequestLog.Collection(new AccessLog(accessLines), metrics)
            : metrics);

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
      management.setRequestLog(new AccessLog(accessLines));
    }

    Metrics.bindJvm(registry);
    Metrics.bindJetty(registry, proxy, threads);
    return new GatewayServer(proxy, management, accessLines);
  }

  /**
   * The proxy connector's selectors, which the upstream client connects through ({@link
   * ProxyConnector}).
   */
  SelectorManager selectors() {
    return ((ProxyConnector) proxy.getConnectors()[0]).selectors();
  }

  /** Sets the proxy's handler chain, before {@link #start}. */
  void serve(ProxyHandler handler) {
    proxy.setHandler(new GracefulHandler(new JettyProxy(handler)));
  }

  /**
   * Starts the management server first: once the proxy accepts requests, {@code /health} answers.
   */
  void start() throws Exception {
    if (accessLines != null) {
      accessLines.start();
    }
    management.start();
    proxy.start();
  }

  /**
   * Stops the proxy gracefully (requests in flight get the stop timeout), then the management
   * server, then writes the access lines still waiting; failures are added to {@code into}.
   */
  void stop(Throwable into) {
    for (Server s : new Server[] {proxy, management}) {
      try {
        s.stop();
      } catch (Exception e) {
        into.addSuppressed(e);
      }
    }
    if (accessLines != null) {
      accessLines.close();
    }
  }

  void join() throws InterruptedException {
    proxy.join();
  }

  int port() {
    return ((ServerConnector) proxy.getConnectors()[0]).getLocalPort();
  }

  int managementPort() {
    return ((ServerConnector) management.getConnectors()[0]).getLocalPort();
  }

  private static HttpConfiguration httpConfiguration() {
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    return http;
  }

  private static void bind(ServerConnector connector, String host, int port) {
    connector.setHost(host);
    connector.setPort(port);
  }
}

package dev.once.gateway;

import dev.once.http.HttpIdempotency;
import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.Purger;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Assembles the Jetty server: a proxy connector whose only context is the idempotency filter in
 * front of {@link UpstreamProxy}, and a management connector with {@code /health}, {@code /metrics}
 * and, when a token is configured, {@code /admin}. Contexts are bound to connectors by name, so no
 * upstream path is ever shadowed by a management endpoint.
 */
final class GatewayServer {

  static final String PROXY_CONNECTOR = "proxy";
  static final String MANAGEMENT_CONNECTOR = "management";

  private GatewayServer() {}

  static Server create(GatewayConfig config, HttpIdempotency http, IdempotencyStore store, Purger purger,
      PrometheusMeterRegistry registry) {
    QueuedThreadPool threads = new QueuedThreadPool(256, 8);
    threads.setName("once-gateway");
    Server server = new Server(threads);
    server.setStopTimeout(config.stopTimeout().toMillis());
    HttpConfiguration http1 = new HttpConfiguration();
    http1.setSendServerVersion(false);
    http1.setSendXPoweredBy(false);
    server.addConnector(connector(server, http1, PROXY_CONNECTOR, config.bind(), config.port()));
    server.addConnector(connector(server, http1, MANAGEMENT_CONNECTOR, config.bind(), config.managementPort()));

    ServletContextHandler proxy = new ServletContextHandler("/", ServletContextHandler.NO_SESSIONS);
    proxy.setVirtualHosts(List.of("@" + PROXY_CONNECTOR));
    ServletHolder upstream = new ServletHolder("upstream", new UpstreamProxy(config.upstream(), config.upstreamConnectTimeout()));
    upstream.setAsyncSupported(true);
    upstream.setInitParameter("timeout", Long.toString(config.upstreamTimeout().toMillis()));
    upstream.setInitParameter("idleTimeout", Long.toString(config.upstreamIdleTimeout().toMillis()));
    upstream.setInitParameter("maxConnections", Integer.toString(config.upstreamMaxConnections()));
    proxy.addServlet(upstream, "/*");
    if (config.idempotency()) {
      IdempotencyFilter.install(proxy, http);
    }

    ServletContextHandler management = new ServletContextHandler("/", ServletContextHandler.NO_SESSIONS);
    management.setVirtualHosts(List.of("@" + MANAGEMENT_CONNECTOR));
    management.addServlet(new ServletHolder("health", new HealthServlet(store)), "/health");
    management.addServlet(new ServletHolder("metrics", new MetricsServlet(registry)), "/metrics");
    management.addServlet(new ServletHolder("not-found", new NotFoundServlet()), "/");
    if (config.adminToken() != null) {
      management.addServlet(new ServletHolder("admin", new AdminServlet(store, purger, new AdminToken(config.adminToken()))), "/admin/*");
    }

    GracefulHandler graceful = new GracefulHandler(new ContextHandlerCollection(proxy, management));
    server.setHandler(graceful);
    RequestLog metrics = new RequestMetrics(registry);
    server.setRequestLog(config.accessLog() ? new RequestLog.Collection(new AccessLog(), metrics) : metrics);
    Metrics.bindJvm(registry);
    Metrics.bindJetty(registry, server, threads);
    return server;
  }

  private static ServerConnector connector(Server server, HttpConfiguration http1, String name, String host, int port) {
    ServerConnector c = new ServerConnector(server, new HttpConnectionFactory(http1));
    c.setName(name);
    c.setHost(host);
    c.setPort(port);
    return c;
  }
}

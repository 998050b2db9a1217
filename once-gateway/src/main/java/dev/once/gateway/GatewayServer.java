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
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Assembles the Jetty server: a proxy connector whose only handler is the {@link ProxyHandler}
 * chain (Jetty core, no servlet layer), and a management connector with {@code /health},
 * {@code /metrics} and, when a token is configured, {@code /admin}. Handlers are bound to connectors
 * by name, so no upstream path is ever shadowed by a management endpoint. The management connector
 * has threads of its own: whatever clients do on the proxy port, {@code /health} answers.
 */
final class GatewayServer {

  static final String PROXY_CONNECTOR = "proxy";
  static final String MANAGEMENT_CONNECTOR = "management";

  private GatewayServer() {}

  static Server create(GatewayConfig config, ProxyHandler proxy, IdempotencyStore store, Purger purger,
      PrometheusMeterRegistry registry) {
    QueuedThreadPool threads = new QueuedThreadPool(200, 8);
    threads.setName("once-gateway");
    Server server = new Server(threads);
    server.setStopTimeout(config.stopTimeout().toMillis());

    HttpConfiguration proxyHttp = httpConfiguration();
    // One header limit on every hop (DESIGN §4): what a client may send, what the upstream client
    // can forward and what an upstream may answer; a response adds at most the slack on its way back.
    proxyHttp.setRequestHeaderSize(config.maxHeaderBytes());
    proxyHttp.setResponseHeaderSize(config.maxHeaderBytes() + Upstream.HEADER_SLACK);
    ServerConnector proxyConnector = new ServerConnector(server, new HttpConnectionFactory(proxyHttp));
    bind(proxyConnector, PROXY_CONNECTOR, config.bind(), config.port());
    // A client waiting for a slow upstream is silent: it must get the 504, not a connection cut first.
    proxyConnector.setIdleTimeout(Math.max(30_000, config.upstreamTimeout().toMillis() + 5_000));
    server.addConnector(proxyConnector);

    QueuedThreadPool managementThreads = new QueuedThreadPool(16, 2);
    managementThreads.setName("once-management");
    ServerConnector managementConnector = new ServerConnector(server, managementThreads, null, null, 1, 1,
        new HttpConnectionFactory(httpConfiguration()));
    bind(managementConnector, MANAGEMENT_CONNECTOR, config.bind(), config.managementPort());
    server.addConnector(managementConnector);

    ContextHandler proxyContext = new ContextHandler(proxy, "/");
    proxyContext.setVirtualHosts(List.of("@" + PROXY_CONNECTOR));

    ServletContextHandler management = new ServletContextHandler("/", ServletContextHandler.NO_SESSIONS);
    management.setVirtualHosts(List.of("@" + MANAGEMENT_CONNECTOR));
    management.addServlet(new ServletHolder("health", new HealthServlet(store)), "/health");
    management.addServlet(new ServletHolder("metrics", new MetricsServlet(registry)), "/metrics");
    management.addServlet(new ServletHolder("not-found", new NotFoundServlet()), "/");
    if (config.adminToken() != null) {
      management.addServlet(new ServletHolder("admin", new AdminServlet(store, purger, new AdminToken(config.adminToken()))), "/admin/*");
    }

    server.setHandler(new GracefulHandler(new ContextHandlerCollection(proxyContext, management)));
    RequestLog metrics = new RequestMetrics(registry);
    server.setRequestLog(config.accessLog() ? new RequestLog.Collection(new AccessLog(), metrics) : metrics);
    Metrics.bindJvm(registry);
    Metrics.bindJetty(registry, server, threads);
    return server;
  }

  private static HttpConfiguration httpConfiguration() {
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    return http;
  }

  private static void bind(ServerConnector connector, String name, String host, int port) {
    connector.setName(name);
    connector.setHost(host);
    connector.setPort(port);
  }
}

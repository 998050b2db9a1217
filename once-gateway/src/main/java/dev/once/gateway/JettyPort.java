package dev.once.gateway;

import io.micrometer.core.instrument.MeterRegistry;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The proxy port on Jetty's server, with threads of its own and no servlet layer: its only handler
 * is the {@link ProxyHandler} chain ({@link JettyProxy}), which never blocks and says so, so Jetty
 * runs it on the thread that parsed the request instead of handing every request to another thread.
 * Its selectors also carry the upstream client's connections ({@link ProxyConnector}).
 */
final class JettyPort implements ProxyPort {

  final Server server;
  private final ServerConnector connector;

  JettyPort(GatewayConfig config, ProxyLog served, MeterRegistry registry) {
    QueuedThreadPool threads = new ProxyThreads(200, 8);
    threads.setName("once-gateway");
    server = new Server(threads);
    server.setStopTimeout(config.stopTimeout().toMillis());
    server.setErrorHandler(new ProblemErrors());
    HttpConfiguration http = GatewayServer.httpConfiguration();
    // One header limit on every hop (DESIGN §4): what a client may send, what the upstream client
    // can forward and what an upstream may answer; a response adds at most the slack on its way
    // back.
    http.setRequestHeaderSize(config.maxHeaderBytes());
    http.setResponseHeaderSize(config.maxHeaderBytes() + UpstreamFields.HEADER_SLACK);
    connector = new ProxyConnector(server, new HttpConnectionFactory(http));
    GatewayServer.bind(connector, config.bind(), config.port());
    connector.setIdleTimeout(config.clientIdleTimeout().toMillis());
    server.addConnector(connector);
    server.setRequestLog(served.jetty());
    Metrics.bindJetty(registry, server, threads);
  }

  /** The connector's selectors, which the upstream client connects through. */
  SelectorManager selectors() {
    return ((ProxyConnector) connector).selectors();
  }

  @Override
  public void start(ProxyHandler chain) throws Exception {
    server.setHandler(new GracefulHandler(new JettyProxy(chain)));
    server.start();
  }

  @Override
  public void stop() throws Exception {
    server.stop();
  }

  @Override
  public int port() {
    return connector.getLocalPort();
  }

  @Override
  public void join() throws InterruptedException {
    server.join();
  }
}

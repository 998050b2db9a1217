package dev.once.gateway;

import io.micrometer.core.instrument.MeterRegistry;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The proxy port on Jetty's server, with threads of its own and no servlet layer: its only handler
 * is the {@link ProxyHandler} chain ({@link JettyProxy}), which never blocks and says so, so Jetty
 * runs it on the thread that parsed the request instead of handing every request to another thread.
 * Its selectors also carry the upstream client's connections ({@link ProxyConnector}).
 */
final class JettyPort implements ProxyPort {

  /** The name the proxy's threads on this core start with. */
  static final String THREADS = "once-gateway";

  final Server server;
  private final ServerConnector connector;
  private @Nullable GracefulHandler graceful;
  private @Nullable JettyProxy proxy;

  JettyPort(GatewayConfig config, ProxyLog served, MeterRegistry registry) {
    QueuedThreadPool threads = new ProxyThreads(200, 8);
    threads.setName(THREADS);
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
    // A stop keeps each connection's own idle timeout. Jetty's default gives every connection a
    // second instead and waits for the idle ones to use it up: a second on every stop, and a slow
    // upload that pauses for longer is cut. The idle ones are closed at once instead (stop()).
    connector.setShutdownIdleTimeout(-1);
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
    JettyProxy started = new JettyProxy(chain);
    GracefulHandler refusing = new GracefulHandler(started);
    proxy = started;
    graceful = refusing;
    server.setHandler(refusing);
    server.start();
  }

  /**
   * Stops taking connections and requests, closes the connections between requests at once, lets
   * those in a request finish within the stop timeout (each then closes after its answer), then
   * closes the rest.
   */
  @Override
  public void stop() throws Exception {
    GracefulHandler refusing = graceful;
    JettyProxy started = proxy;
    if (refusing != null && started != null) {
      // Refusing first: a request that arrives on a connection after it was found idle is
      // answered 503 rather than run on a connection about to close.
      refusing.shutdown();
      connector.shutdown();
      // The clients' connections alone: the upstream's, on the same selectors, are not the
      // connector's (ProxyConnector), so none carrying a request in flight is closed here.
      started.closeIdle(connector.getConnectedEndPoints());
    }
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

package dev.once.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.Servlet;
import java.net.URI;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** An embedded Jetty 12 (EE10) on a loopback port, with the filter in front of one servlet. */
final class JettyServer implements AutoCloseable {

  private final Server server;
  private final URI base;

  private JettyServer(Server server, URI base) {
    this.server = server;
    this.base = base;
  }

  /**
   * Starts Jetty with {@code servlet} at {@code /*} behind the filter (mapped for these dispatches
   * only), or without one if it is null; a {@link FakeOuterFilter} runs in front of both.
   */
  static JettyServer start(
      Filter once, String contextPath, Servlet servlet, EnumSet<DispatcherType> dispatches)
      throws Exception {
    QueuedThreadPool threads = new QueuedThreadPool(256, 8);
    threads.setName("jetty");
    Server server = new Server(threads);
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.setAcceptQueueSize(512);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.setContextPath(contextPath);
    context.addFilter(
        new FilterHolder(new FakeOuterFilter()), "/*", EnumSet.of(DispatcherType.REQUEST));
    if (once != null) {
      FilterHolder filter = new FilterHolder(once);
      filter.setAsyncSupported(true);
      context.addFilter(filter, "/*", dispatches);
    }
    ServletHolder holder = new ServletHolder(servlet);
    holder.setAsyncSupported(true);
    context.addServlet(holder, "/*");
    server.setHandler(context);
    server.start();
    String path = contextPath.equals("/") ? "" : contextPath;
    return new JettyServer(
        server, URI.create("http://127.0.0.1:" + connector.getLocalPort() + path));
  }

  /** The application's base URI, without a trailing slash. */
  URI base() {
    return base;
  }

  int port() {
    return base.getPort();
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}

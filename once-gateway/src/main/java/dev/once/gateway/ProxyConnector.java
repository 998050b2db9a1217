package dev.once.gateway;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.ConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The proxy's server connector, whose selectors also carry the connections to the upstream ({@link
 * UpstreamConnector}): one thread reads a request, writes it upstream, reads the answer and writes
 * it back, as an event-loop proxy does.
 *
 * <p><b>Why.</b> With selectors of its own for the upstream client, every exchange crossed two
 * selector threads. Each slept in {@code epoll_wait} between requests and was woken for the next,
 * and a client connection's read interest, set again after every answer from the upstream side,
 * went through the server's selector with a wake-up of its own: about one context switch per
 * request, where nginx has a fifth of one. Here the exchange stays on one thread, as in a proxy of
 * the event-loop kind (nginx, or case c0 of the gateway benchmark): the switches fall to nginx's
 * level ({@code docs/benchmarks.md}).
 *
 * <p><b>How.</b> Jetty's selectors ask their manager for the endpoint and the connection of every
 * channel they open, accepted or connected. This connector's manager answers for an accepted
 * channel as the server's own does, and hands a connected one, whose context names the {@link
 * UpstreamConnector} that opened it, to that connector. Only the server's endpoints are this
 * connector's own: the upstream's are not counted in its connections, its statistics or its
 * graceful close.
 */
final class ProxyConnector extends ServerConnector {

  ProxyConnector(Server server, ConnectionFactory factory) {
    super(server, factory);
  }

  /** A client's connection: its reads wait for the selector once the socket was found empty. */
  @Override
  protected SocketChannelEndPoint newEndPoint(
      SocketChannel channel, ManagedSelector selector, SelectionKey key) {
    SocketChannelEndPoint endPoint = new SparingEndPoint(channel, selector, key, getScheduler());
    endPoint.setIdleTimeout(getIdleTimeout());
    return endPoint;
  }

  /** The selectors, for the upstream client to connect through. */
  SelectorManager selectors() {
    return getSelectorManager();
  }

  @Override
  protected SelectorManager newSelectorManager(
      Executor executor, Scheduler scheduler, int selectors) {
    return new Selectors(executor, scheduler, selectors);
  }

  /** The server's selector manager, which also opens what the upstream client connects. */
  private final class Selectors extends ServerConnectorManager {

    Selectors(Executor executor, Scheduler scheduler, int selectors) {
      super(executor, scheduler, selectors);
    }

    @Override
    protected SocketChannelEndPoint newEndPoint(
        SelectableChannel channel, ManagedSelector selector, SelectionKey key) throws IOException {
      UpstreamConnector upstream = UpstreamConnector.of(key.attachment());
      return upstream == null
          ? super.newEndPoint(channel, selector, key)
          : upstream.endPoint(channel, selector, key);
    }

    @Override
    public Connection newConnection(SelectableChannel channel, EndPoint endPoint, Object context)
        throws IOException {
      UpstreamConnector upstream = UpstreamConnector.of(context);
      return upstream == null
          ? super.newConnection(channel, endPoint, context)
          : upstream.connection((UpstreamEndPoint) endPoint, contextOf(context));
    }

    /** For a connected channel, the client's connect completes: its request goes on. */
    @Override
    public void connectionOpened(Connection connection, Object context) {
      if (UpstreamConnector.of(context) == null) {
        super.connectionOpened(connection, context);
        return;
      }
      // Jetty's client puts the connect's promise in every connect's context.
      @SuppressWarnings("unchecked")
      Promise<Connection> promise =
          (Promise<Connection>)
              Objects.requireNonNull(
                  contextOf(context).get(ClientConnector.CONNECTION_PROMISE_CONTEXT_KEY),
                  "the connect's promise");
      try {
        super.connectionOpened(connection, context);
        promise.succeeded(connection);
      } catch (RuntimeException | Error failure) {
        promise.failed(failure);
      }
    }

    @Override
    protected void connectionFailed(SelectableChannel channel, Throwable failure, Object context) {
      super.connectionFailed(channel, failure, context);
      UpstreamConnector upstream = UpstreamConnector.of(context);
      if (upstream != null) {
        upstream.failed(channel, failure, contextOf(context));
      }
    }

    @Override
    protected void endPointOpened(EndPoint endPoint) {
      if (!(endPoint instanceof UpstreamEndPoint)) {
        super.endPointOpened(endPoint);
      }
    }

    @Override
    protected void endPointClosed(EndPoint endPoint) {
      if (!(endPoint instanceof UpstreamEndPoint)) {
        super.endPointClosed(endPoint);
      }
    }
  }

  @SuppressWarnings("unchecked") // a connected channel's context is always the client's map
  private static Map<String, Object> contextOf(Object context) {
    return (Map<String, Object>) context;
  }
}

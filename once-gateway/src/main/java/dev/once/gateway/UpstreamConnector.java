package dev.once.gateway;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Map;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.jspecify.annotations.Nullable;

/**
 * The upstream client's connector: its connections are {@link UpstreamEndPoint}s, and it connects
 * through the proxy server's selectors ({@link ProxyConnector}) rather than selectors of its own,
 * so an exchange's two connections are served by one thread. Those selectors start and stop with
 * the proxy server; this connector only uses them.
 *
 * <p>The selectors call back {@link ProxyConnector} for every channel they open; for one this
 * connector connected (its context names this connector, as Jetty's client puts it there) the
 * callbacks come here and do what Jetty's own client selector manager does, except telling connect
 * listeners, which the gateway registers none of.
 */
final class UpstreamConnector extends ClientConnector {

  private final SelectorManager selectors;

  UpstreamConnector(SelectorManager selectors) {
    this.selectors = selectors;
  }

  /** The connector that opened a channel with this context, or null for an accepted channel. */
  static @Nullable UpstreamConnector of(@Nullable Object context) {
    return context instanceof Map<?, ?> map
            && map.get(CLIENT_CONNECTOR_CONTEXT_KEY) instanceof UpstreamConnector connector
        ? connector
        : null;
  }

  @Override
  protected SelectorManager newSelectorManager() {
    // Added as a bean this connector does not manage: ClientConnector#doStart adds it again, which
    // then changes nothing, and would otherwise start (and stop) the proxy server's selectors.
    addBean(selectors, false);
    return selectors;
  }

  @Override
  protected UpstreamEndPoint newEndPoint(
      SelectableChannel channel, ManagedSelector selector, SelectionKey key) {
    return new UpstreamEndPoint((SocketChannel) channel, selector, key, getScheduler());
  }

  /** The endpoint of a channel this connector connected, with the client's idle timeout. */
  UpstreamEndPoint endPoint(SelectableChannel channel, ManagedSelector selector, SelectionKey key) {
    UpstreamEndPoint endPoint = newEndPoint(channel, selector, key);
    endPoint.setIdleTimeout(getIdleTimeout().toMillis());
    return endPoint;
  }

  /** The client's connection (HTTP/1.1, over TLS for an https upstream) on {@code endPoint}. */
  Connection connection(UpstreamEndPoint endPoint, Map<String, Object> context) throws IOException {
    return newConnection(endPoint, context);
  }

  /** Fails the connect's promise: the request that needed the connection fails as not sent. */
  void failed(SelectableChannel channel, Throwable failure, Map<String, Object> context) {
    connectFailed(
        channel, (SocketAddress) context.get(REMOTE_SOCKET_ADDRESS_CONTEXT_KEY), failure, context);
  }
}

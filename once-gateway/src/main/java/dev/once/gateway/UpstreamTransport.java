package dev.once.gateway;

import java.util.Map;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.client.transport.internal.HttpConnectionOverHTTP;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;

/**
 * HTTP/1.1 to the upstream, with the response read on the selector thread that saw its bytes.
 *
 * <p>Jetty takes a connection whose type it does not know for one that may block, and hands every
 * read to another thread: a wake-up per response, the largest single cost of an exchange in the
 * gateway's profile. Nothing the gateway does with a response blocks: {@link UpstreamResponse}
 * writes to the client asynchronously and finishes the lease with the store's asynchronous calls.
 * So the connection says it never blocks, and its reads run where they are selected.
 */
final class UpstreamTransport extends HttpClientTransportOverHTTP {

  private final NonBlocking connections = new NonBlocking();

  UpstreamTransport(ClientConnector connector) {
    super(connector);
  }

  @Override
  public Connection newConnection(EndPoint endPoint, Map<String, Object> context) {
    connections.setInitializeConnections(isInitializeConnections());
    return connections.newConnection(endPoint, context);
  }

  /** Jetty's HTTP/1.1 connections, each of which says that reading it never blocks. */
  private static final class NonBlocking extends HttpClientConnectionFactory {
    @Override
    public Connection newConnection(EndPoint endPoint, Map<String, Object> context) {
      HttpConnectionOverHTTP connection =
          new HttpConnectionOverHTTP(endPoint, context) {
            @Override
            public InvocationType getInvocationType() {
              return InvocationType.NON_BLOCKING;
            }
          };
      connection.setInitialize(isInitializeConnections());
      return customize(connection, context);
    }
  }
}

package dev.once.gateway;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The {@link ProxyHandler} chain as Jetty's server runs it. The chain never waits and says so
 * ({@link Handler.Abstract.NonBlocking}), so Jetty runs it on the thread that parsed the request:
 * no hand-off per request. A keep-alive connection's next request starts on the thread that
 * completed the answer before it ({@link ProxyThreads}).
 *
 * <p>It knows which connections have a request in the chain, so that a stop can close the others at
 * once ({@link #closeIdle}), as the Netty core does.
 */
final class JettyProxy extends Handler.Abstract.NonBlocking {

  private final ProxyHandler chain;

  /** Connections with a request in the chain; HTTP/1.1 serves one request at a time on each. */
  private final Set<Connection> serving = ConcurrentHashMap.newKeySet();

  JettyProxy(ProxyHandler chain) {
    this.chain = chain;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    Connection connection = request.getConnectionMetaData().getConnection();
    serving.add(connection);
    chain.handle(new JettyHop(request, response, new Served(callback, connection)));
    return true;
  }

  /**
   * Closes those of {@code endPoints} whose connection has no request in the chain. Called once the
   * server refuses new requests, so a connection found between requests gets none but a refusal.
   */
  void closeIdle(Iterable<EndPoint> endPoints) {
    for (EndPoint endPoint : endPoints) {
      if (!serving.contains(endPoint.getConnection())) {
        endPoint.close();
      }
    }
  }

  /**
   * The request's callback, which takes its connection off {@link #serving} before Jetty hears the
   * request is done: Jetty may start the connection's next request from inside that call.
   */
  private final class Served extends Callback.Nested {
    private final Connection connection;

    Served(Callback callback, Connection connection) {
      super(callback);
      this.connection = connection;
    }

    @Override
    public void succeeded() {
      serving.remove(connection);
      super.succeeded();
    }

    @Override
    public void failed(Throwable failure) {
      serving.remove(connection);
      super.failed(failure);
    }
  }
}

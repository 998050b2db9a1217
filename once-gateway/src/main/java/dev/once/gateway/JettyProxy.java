package dev.once.gateway;

import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The {@link ProxyHandler} chain as Jetty's server runs it. The chain never waits and says so
 * ({@link Handler.Abstract.NonBlocking}), so Jetty runs it on the thread that parsed the request:
 * no hand-off per request. A keep-alive connection's next request starts on the thread that
 * completed the answer before it ({@link ProxyThreads}).
 */
final class JettyProxy extends Handler.Abstract.NonBlocking {

  private final ProxyHandler chain;

  JettyProxy(ProxyHandler chain) {
    this.chain = chain;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    chain.handle(new JettyHop(request, response, callback));
    return true;
  }
}

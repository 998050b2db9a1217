package dev.once.gateway;

import dev.once.http.Exchange;
import dev.once.servlet.OnceFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.ee10.proxy.ProxyServlet;
import org.eclipse.jetty.io.ClientConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Jetty's {@link ProxyServlet}, pointed at one upstream, with what idempotency needs from a proxy:
 * <ul>
 *   <li><b>key chaining</b>: the {@code Idempotency-Key} goes upstream as it came, with the scope as
 *       {@code Once-Scope} and the lease's fencing token as {@code Once-Token}, so an idempotent
 *       upstream can settle retries itself and reject stale ones; clients cannot send these two;
 *   <li><b>ambiguous failures</b>: a failure after the request was committed to the upstream leaves
 *       the exchange in progress ({@link OnceFilter#OUTCOME}: the filter abandons it) rather than
 *       releasing the key; a failure to connect releases it, because nothing reached the upstream.
 * </ul>
 */
final class UpstreamProxy extends ProxyServlet {

  private static final long serialVersionUID = 1L;
  private static final Logger log = LoggerFactory.getLogger(UpstreamProxy.class);

  static final String SCOPE_HEADER = "Once-Scope";
  static final String TOKEN_HEADER = "Once-Token";
  private static final String SENT_ATTRIBUTE = UpstreamProxy.class.getName() + ".sent";

  private final transient URI upstream;
  private final Duration connectTimeout;

  UpstreamProxy(URI upstream, Duration connectTimeout) {
    this.upstream = upstream;
    this.connectTimeout = connectTimeout;
  }

  @Override
  protected String rewriteTarget(HttpServletRequest request) {
    String query = request.getQueryString();
    return upstream + request.getRequestURI() + (query == null ? "" : "?" + query);
  }

  @Override
  protected HttpClient newHttpClient(ClientConnector connector) {
    connector.setConnectTimeout(connectTimeout);
    return super.newHttpClient(connector);
  }

  @Override
  protected void copyRequestHeaders(HttpServletRequest clientRequest, Request proxyRequest) {
    super.copyRequestHeaders(clientRequest, proxyRequest);
    proxyRequest.headers(h -> {
      // Only the gateway speaks for the store: a client's own values would let it forge a lease.
      h.remove(SCOPE_HEADER);
      h.remove(TOKEN_HEADER);
      if (clientRequest.getAttribute(OnceFilter.EXCHANGE) instanceof Exchange exchange) {
        h.put(SCOPE_HEADER, exchange.scope().value());
        h.put(TOKEN_HEADER, Long.toString(exchange.token()));
      }
    });
  }

  @Override
  protected String filterServerResponseHeader(HttpServletRequest clientRequest, Response serverResponse,
      String headerName, String headerValue) {
    // Jetty writes its own Date; the upstream's would make two.
    return headerName.equalsIgnoreCase("Date") ? null : headerValue;
  }

  @Override
  protected void sendProxyRequest(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Request proxyRequest) {
    AtomicBoolean sent = new AtomicBoolean();
    clientRequest.setAttribute(SENT_ATTRIBUTE, sent);
    // Committed = the request head went out on a connection: from here the upstream may act on it.
    proxyRequest.onRequestCommit(r -> sent.set(true));
    super.sendProxyRequest(clientRequest, proxyResponse, proxyRequest);
  }

  @Override
  protected void onProxyResponseFailure(HttpServletRequest clientRequest, HttpServletResponse proxyResponse,
      Response serverResponse, Throwable failure) {
    boolean sent = clientRequest.getAttribute(SENT_ATTRIBUTE) instanceof AtomicBoolean b && b.get();
    UpstreamFailure kind = UpstreamFailure.of(failure, sent);
    if (kind.ambiguous()) {
      clientRequest.setAttribute(OnceFilter.OUTCOME, OnceFilter.AMBIGUOUS);
    }
    log.warn("upstream {} for {} {}: {}", kind.name().toLowerCase(java.util.Locale.ROOT), clientRequest.getMethod(),
        clientRequest.getRequestURI(), failure.toString());
    respond(clientRequest, proxyResponse, kind);
  }

  private static void respond(HttpServletRequest clientRequest, HttpServletResponse response, UpstreamFailure kind) {
    try {
      if (!response.isCommitted()) {
        // Drop whatever the upstream had sent of its response: the client gets one clear problem.
        response.reset();
        response.setStatus(kind.status());
        response.setContentType(kind.mediaType());
        byte[] body = kind.body();
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
      } else {
        // Part of the upstream's response is already on the wire: all we can do is cut it short.
        response.sendError(-1);
      }
    } catch (IOException | RuntimeException e) {
      log.debug("could not send the upstream failure to the client", e);
    } finally {
      if (clientRequest.isAsyncStarted()) {
        clientRequest.getAsyncContext().complete();
      }
    }
  }
}

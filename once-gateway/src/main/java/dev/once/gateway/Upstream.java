package dev.once.gateway;

import dev.once.IdempotencyKey;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.http.Exchange;
import dev.once.http.Headers;
import java.net.URI;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.ContinueProtocolHandler;
import org.eclipse.jetty.client.EarlyHintsProtocolHandler;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Origin;
import org.eclipse.jetty.client.ProcessingProtocolHandler;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The upstream, reached with Jetty's asynchronous {@link HttpClient}: no thread waits for it. It
 * forwards one {@link ProxyExchange} with what idempotency needs from a proxy:
 *
 * <ul>
 *   <li><b>key chaining</b>: the key goes upstream in one canonical spelling, with the scope as
 *       {@code Once-Scope} and the lease's fencing token as {@code Once-Token}, so an idempotent
 *       upstream can settle retries itself and reject stale ones; clients cannot send these two;
 *   <li><b>only end-to-end headers</b> cross, both ways: hop-by-hop fields and those named in
 *       {@code Connection} stay on their hop (RFC 9110 §7.6.1);
 *   <li><b>whether the request was sent</b>, which {@link UpstreamResponse} needs to tell a safe
 *       failure from an ambiguous one.
 * </ul>
 *
 * The client is built with the gateway's header limit, so a request the gateway accepted can be
 * sent, and it never decodes, follows redirects, answers authentication challenges or keeps
 * cookies: the client sees what the upstream said.
 */
final class Upstream implements AutoCloseable {

  static final String SCOPE_HEADER = "Once-Scope";
  static final String TOKEN_HEADER = "Once-Token";

  /**
   * Room beside the header limit for what a hop adds (the Host, the scope and token, a replay
   * marker).
   */
  static final int HEADER_SLACK = 1024;

  /**
   * Request fields never copied upstream, in any case: the client's own framing, the fields only
   * the gateway may set, and those {@link Forwarding} writes.
   */
  private static final Set<String> NOT_FORWARDED = notForwarded();

  private static Set<String> notForwarded() {
    Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    names.addAll(List.of("host", "content-length", "expect", SCOPE_HEADER, TOKEN_HEADER));
    names.addAll(Forwarding.FIELDS);
    return Collections.unmodifiableSet(names);
  }

  private final HttpClient client;

  /** The upstream's origin: each request starts from it, so none parses it again. */
  private final URI origin;

  /**
   * The {@code Host} field every request carries, as Jetty would derive it from the origin: set
   * here, so Jetty does not build and parse each request's whole URI to find it.
   */
  private final HttpField host;

  private final String basePath;
  private final long timeoutMillis;
  private final int maxHeaderBytes;
  private final Forwarding forwarding;
  private final long bodyGraceNanos;
  private final long minBodyRate;

  private Upstream(HttpClient client, GatewayConfig config) {
    URI base = config.upstream();
    int port = base.getPort() >= 0 ? base.getPort() : base.getScheme().equals("https") ? 443 : 80;
    this.client = client;
    this.origin = URI.create(new Origin(base.getScheme(), base.getHost(), port).asString());
    this.host = new HttpField(HttpHeader.HOST, origin.getRawAuthority());
    this.basePath = base.getRawPath() == null ? "" : base.getRawPath();
    this.timeoutMillis = config.upstreamTimeout().toMillis();
    this.maxHeaderBytes = config.maxHeaderBytes();
    this.forwarding = config.forwarding();
    this.bodyGraceNanos = config.requestBodyTimeout().toNanos();
    this.minBodyRate = config.minRequestDataRate();
  }

  /**
   * Starts the client, connecting through {@code selectors}, the proxy server's ({@link
   * ProxyConnector}): an exchange's two connections are then served by one thread.
   */
  static Upstream start(GatewayConfig config, SelectorManager selectors) throws Exception {
    ClientConnector connector = new UpstreamConnector(selectors);
    connector.setConnectTimeout(config.upstreamConnectTimeout());
    QueuedThreadPool threads = new QueuedThreadPool(64, 2);
    threads.setName("once-upstream");
    threads.setDaemon(true);
    connector.setExecutor(threads);
    HttpClient client = new HttpClient(new UpstreamTransport(connector));
    client.setExecutor(threads);
    client.setFollowRedirects(false);
    // A body without a Content-Type goes upstream without one.
    client.setDefaultRequestContentType(null);
    client.setUserAgentField(null);
    client.setHttpCookieStore(new HttpCookieStore.Empty());
    client.setIdleTimeout(config.upstreamIdleTimeout().toMillis());
    client.setMaxConnectionsPerDestination(config.upstreamMaxConnections());
    client.setMaxRequestsQueuedPerDestination(4096);
    client.setRequestBufferSize(config.maxHeaderBytes() + HEADER_SLACK);
    // Parse more than the limit, so that a response over it is known to be one (the upstream ran)
    // rather than a broken connection (which may not have).
    client.setMaxResponseHeadersSize(4 * config.maxHeaderBytes());
    client.setResponseBufferSize(Math.max(16 << 10, config.maxHeaderBytes() + HEADER_SLACK));
    client.start();
    faithful(client);
    return new Upstream(client, config);
  }

  /**
   * Leaves the client nothing that changes what the upstream said. {@link HttpClient#doStart()}
   * installs its protocol handlers and content decoders, so this runs after it: a decoder would add
   * {@code Accept-Encoding} and decode bodies (dropping {@code Content-Encoding}, keeping a {@code
   * Content-Range} for bytes the client never gets), and the authentication handlers buffer a 401
   * or 407 body (16 KiB at most, else the exchange fails after the upstream acted). Only the
   * handlers of interim responses (100, 102, 103) stay, which Jetty consumes before the final
   * response, as an intermediary may; any other 1xx reaches {@link UpstreamResponse} as final.
   */
  static void faithful(HttpClient client) {
    client.getContentDecoderFactories().clear();
    client.getProtocolHandlers().clear();
    client.getProtocolHandlers().put(new ContinueOnly());
    client.getProtocolHandlers().put(new ProcessingProtocolHandler());
    client.getProtocolHandlers().put(new EarlyHintsProtocolHandler());
  }

  /**
   * Sends the exchange's request upstream and hands its response to an {@link UpstreamResponse}.
   */
  void forward(ProxyExchange exchange) {
    UpstreamResponse response = new UpstreamResponse(exchange, maxHeaderBytes);
    Request request;
    try {
      String query = exchange.hop.query();
      // The target goes as the client wrote it: Jetty's client sends a path it cannot parse as a
      // java.net.URI unchanged, where URI.create would refuse characters Jetty's server accepted
      // (a '|' or '{' in a query) and the request would fail as "not sent" on every retry.
      request =
          client
              .newRequest(origin)
              .path(basePath + exchange.hop.path() + (query == null ? "" : "?" + query))
              .method(exchange.method)
              .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
              .headers(
                  h -> {
                    h.put(host);
                    copyHeaders(exchange, h, forwarding);
                  });
      Request.Content body = bodyOf(exchange, request);
      if (body != null) {
        request.body(body);
      }
    } catch (RuntimeException e) {
      response.failed(e); // nothing was sent
      return;
    }
    request.onRequestBegin(response::sent);
    request.onResponseBegin(response::began);
    request.onResponseHeaders(response::headers);
    // send() registers the listener for every event it implements: complete and content.
    request.send(response);
  }

  /**
   * The request's body as it goes upstream: none if the client sent none (no {@code Content-Length}
   * nor {@code Transfer-Encoding}), so a bodiless GET or DELETE is not given a {@code
   * Content-Length: 0}; and never with a {@code Content-Type} the client did not send.
   */
  private Request.@Nullable Content bodyOf(ProxyExchange exchange, Request request) {
    if (exchange.headers.first("Content-Length").isEmpty()
        && exchange.headers.first("Transfer-Encoding").isEmpty()) {
      return null; // HTTP/1.1: a request without either has no body (RFC 9112 §6.3)
    }
    byte[] read = exchange.body();
    if (read != null) {
      return new BytesRequestContent((String) null, read);
    }
    BodyPace pace =
        minBodyRate <= 0
            ? null
            : new BodyPace(
                exchange.hop.scheduler(),
                bodyGraceNanos,
                minBodyRate,
                () -> {
                  exchange.bodyFailed(GatewayProblem.REQUEST_BODY_TIMEOUT);
                  request.abort(new TimeoutException("the request body fell behind its pace"));
                });
    return new StreamedBody(exchange, pace);
  }

  private static void copyHeaders(
      ProxyExchange exchange, HttpFields.Mutable out, Forwarding forwarding) {
    // The key goes upstream under the route's own header name, in its one canonical spelling.
    String keyHeader = exchange.route.policy().keyHeader();
    for (Headers.Field f : exchange.headers.endToEnd()) {
      // A name with '_' is dropped, as nginx does: CGI-style servers (WSGI, Rack, PHP) read '-' and
      // '_' alike, so Once_Token would reach them as the Once-Token the gateway strips.
      if (!NOT_FORWARDED.contains(f.name())
          && f.name().indexOf('_') < 0
          && !f.name().equalsIgnoreCase(keyHeader)) {
        out.add(f.name(), f.value());
      }
    }
    exchange.headers.all(keyHeader).forEach(v -> out.add(keyHeader, canonical(v)));
    Exchange guard = exchange.guard();
    if (guard != null) {
      out.put(SCOPE_HEADER, guard.scope().value());
      out.put(TOKEN_HEADER, Long.toString(guard.token()));
    }
    ClientHop hop = exchange.hop;
    forwarding.write(exchange.headers, hop.peer(), hop.peerAddress(), hop.scheme(), out);
  }

  /**
   * The one spelling of a key the upstream sees, whatever the client sent ({@code "K"} or {@code
   * K}): the bare form, unless the key starts with a quote, which only the sf-string form can
   * carry. A value that is no key (on a method the route does not cover) goes on as it came.
   */
  static String canonical(String headerValue) {
    String key;
    try {
      key = IdempotencyKey.parseHeader(headerValue).value();
    } catch (InvalidIdempotencyKeyException e) {
      return headerValue;
    }
    if (key.charAt(0) != '"') {
      return key;
    }
    return '"' + key.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }

  @Override
  public void close() throws Exception {
    client.stop();
  }

  /**
   * Jetty's handler of {@code 100 Continue}, asked only about a 100. It also takes any answer to a
   * request that expects one, to end the wait for the go-ahead, and so reads every request's fields
   * for {@code Expect} on every response; the gateway never sends {@code Expect} upstream.
   */
  private static final class ContinueOnly extends ContinueProtocolHandler {
    @Override
    public boolean accept(Request request, Response response) {
      return response.getStatus() == HttpStatus.CONTINUE_100 && super.accept(request, response);
    }
  }

  /**
   * The client's request body, streamed upstream as it arrives, with Jetty's demand: no thread
   * waits for it. With a {@link BodyPace}, a client that falls behind is cut and answered 408.
   */
  private static final class StreamedBody implements Request.Content {
    private final ProxyExchange exchange;
    private final Content.Source source;
    private final @Nullable BodyPace pace;

    StreamedBody(ProxyExchange exchange, @Nullable BodyPace pace) {
      this.exchange = exchange;
      this.source = exchange.hop.body();
      this.pace = pace;
    }

    @Override
    public long getLength() {
      return source.getLength();
    }

    @Override
    public @Nullable String getContentType() {
      return null; // the client's own Content-Type, if any, is among the forwarded headers
    }

    @Override
    public Content.Chunk read() {
      Content.Chunk chunk = source.read();
      if (Content.Chunk.isFailure(chunk)) {
        // The client's fault: UpstreamResponse answers 400, not 502.
        exchange.bodyFailed(GatewayProblem.REQUEST_BODY_MALFORMED);
      }
      if (pace != null && chunk != null) {
        pace.read(chunk.remaining());
        if (chunk.isLast()) {
          pace.stop();
        }
      }
      return chunk;
    }

    @Override
    public void demand(Runnable demandCallback) {
      source.demand(pace == null ? demandCallback : pace.demanding(demandCallback));
    }

    @Override
    public void fail(Throwable failure) {
      if (pace != null) {
        pace.stop();
      }
      source.fail(failure);
    }
  }
}

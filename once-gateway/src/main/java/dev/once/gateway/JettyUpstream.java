package dev.once.gateway;

import java.net.URI;
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
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.transport.HttpResponse;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The upstream, reached with Jetty's asynchronous {@link HttpClient}: no thread waits for it. It
 * sends one {@link ProxyExchange}'s request as {@link UpstreamFields} shapes it, and reports to its
 * {@link UpstreamResponse} what the rules there judge by: whether the request was sent (to tell a
 * safe failure from an ambiguous one), the answer's head and body, and how the exchange ended.
 *
 * <p>The client is built with the gateway's header limit, so a request the gateway accepted can be
 * sent, and it never decodes, follows redirects, answers authentication challenges or keeps
 * cookies: the client sees what the upstream said.
 */
final class JettyUpstream implements AutoCloseable, ProxyHandler.Forwarder {

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

  private JettyUpstream(HttpClient client, GatewayConfig config) {
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
  static JettyUpstream start(GatewayConfig config, SelectorManager selectors) throws Exception {
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
    client.setRequestBufferSize(config.maxHeaderBytes() + UpstreamFields.HEADER_SLACK);
    // Parse more than the limit, so that a response over it is known to be one (the upstream ran)
    // rather than a broken connection (which may not have).
    client.setMaxResponseHeadersSize(4 * config.maxHeaderBytes());
    client.setResponseBufferSize(
        Math.max(16 << 10, config.maxHeaderBytes() + UpstreamFields.HEADER_SLACK));
    client.start();
    faithful(client);
    return new JettyUpstream(client, config);
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
  @Override
  public void forward(ProxyExchange exchange) {
    UpstreamResponse rules = new UpstreamResponse(exchange, maxHeaderBytes);
    Request request;
    try {
      // Jetty's client sends a path it cannot parse as a java.net.URI unchanged, where URI.create
      // would refuse it: see UpstreamFields.target.
      request =
          client
              .newRequest(origin)
              .path(UpstreamFields.target(basePath, exchange.hop))
              .method(exchange.method)
              .timeout(timeoutMillis, TimeUnit.MILLISECONDS)
              .headers(
                  h -> {
                    h.put(host);
                    UpstreamFields.write(exchange, forwarding, h::add);
                  });
      Request.Content body = bodyOf(exchange, request);
      if (body != null) {
        request.body(body);
      }
    } catch (RuntimeException e) {
      rules.failed(e); // nothing was sent
      return;
    }
    Answer answer = new Answer(rules, request);
    request.onRequestBegin(sent -> rules.sent());
    request.onResponseBegin(answer::began);
    request.onResponseHeaders(answer::headers);
    // send() registers the listener for every event it implements: complete and content.
    request.send(answer);
  }

  /**
   * The request's body as it goes upstream: none if the client sent none ({@link
   * UpstreamFields#hasBody}), and never with a {@code Content-Type} the client did not send.
   */
  private Request.@Nullable Content bodyOf(ProxyExchange exchange, Request request) {
    if (!UpstreamFields.hasBody(exchange)) {
      return null;
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

  @Override
  public void close() throws Exception {
    client.stop();
  }

  /**
   * Jetty's client's events for one exchange, handed to its {@link UpstreamResponse}, and the
   * response they came with, which the rules act on ({@link UpstreamResponse.UpstreamCall}).
   *
   * <p>The rules take the answer's head when it is complete and never read this response again:
   * Jetty's client parses bytes that arrive after a complete answer, while the request is still
   * being sent, against the same exchange, and sets their status on the response it already
   * delivered (as 12.0.16's {@code HttpReceiverOverHTTP.startResponse} does).
   */
  private static final class Answer
      implements Response.AsyncContentListener,
          Response.CompleteListener,
          UpstreamResponse.UpstreamCall {

    private final UpstreamResponse rules;
    private final Request request;

    /** The response, from its first event on. */
    private volatile @Nullable Response response;

    Answer(UpstreamResponse rules, Request request) {
      this.rules = rules;
      this.request = request;
    }

    void began(Response began) {
      response = began;
      rules.began();
    }

    void headers(Response head) {
      response = head;
      rules.head(this, head.getStatus(), JettyHop.headersOf(head.getHeaders()));
    }

    @Override
    public void onContent(Response content, Content.Chunk chunk, Runnable demander) {
      rules.content(this, chunk, demander);
    }

    @Override
    public void onComplete(Result result) {
      rules.complete(result.isFailed() ? result.getFailure() : null);
    }

    /**
     * Aborts through the response, as the rules only act once it began; through the request should
     * that ever not hold, so that an abort is never lost and the exchange always completes.
     */
    @Override
    public void abort(Throwable failure) {
      Response aborted = response;
      if (aborted != null) {
        aborted.abort(failure);
      } else {
        request.abort(failure);
      }
    }

    /**
     * Jetty closes the connection after this exchange when the answer says {@code Connection:
     * close}, which as a hop-by-hop field goes no further.
     */
    @Override
    public void closeAfter() {
      if (response instanceof HttpResponse mutable) {
        mutable.headers(h -> h.put(HttpHeader.CONNECTION, "close"));
      }
    }
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

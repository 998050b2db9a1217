package dev.once.webflux;

import dev.once.http.Decision;
import dev.once.http.Exchange;
import dev.once.http.HttpIdempotency;
import dev.once.http.IncomingRequest;
import dev.once.http.Problems;
import dev.once.http.Route;
import dev.once.http.StoredResponse;
import java.security.Principal;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * A Spring WebFlux {@link WebFilter} that gives every route of a reactive application the
 * idempotency semantics of {@link HttpIdempotency} (DESIGN §4), as {@code OnceFilter} does for
 * servlet applications: retries replay the first response, a reused key is refused, duplicates in
 * flight are told to wait, and transient failures release the key.
 *
 * <pre>{@code
 * HttpIdempotency http = HttpIdempotency.builder(once)
 *     .route("/api/payments", RoutePolicy.builder().keyRequired(true).build())
 *     .build();
 * WebHttpHandlerBuilder.webHandler(handler).filter(OnceWebFilter.of(http));
 * }</pre>
 *
 * <p>It never blocks: the request body is aggregated without a thread waiting for it, and the store
 * is asked through {@link HttpIdempotency#beginAsync} and the exchange's asynchronous finishing
 * calls (a Redis store answers on its client's threads; a blocking store runs on the engine's store
 * executor). The handler and the answer continue on the thread the request arrived on when the
 * store answered at once, else on Reactor's parallel scheduler, never on a store's own threads.
 *
 * <p>On a covered request that carries a key, the filter reads the body (at most the route's {@code
 * maxRequestBytes}, else 413), hands the handler an exchange whose request, form and multipart data
 * still have it, and holds the handler's response until it completes, so that it can be recorded
 * and then sent. A body over the route's {@code maxResultBytes}, or written with {@code
 * writeAndFlushWith} (server-sent events, streaming media types), is streamed to the client as it
 * is written; it counts as done, and its retries are answered 409 {@code
 * idempotency-response-unavailable}. See {@code docs/webflux.md}.
 */
public final class OnceWebFilter implements WebFilter, Ordered {

  private static final Logger log = LoggerFactory.getLogger(OnceWebFilter.class);

  /**
   * The exchange attribute under which the handler finds the {@link Exchange} it runs for: its
   * scope and fencing token, to pass on to systems that can settle retries themselves. The same
   * name as the servlet filter's request attribute.
   */
  public static final String EXCHANGE = "dev.once.http.Exchange";

  /**
   * A handler that cannot tell whether its effect happened (a proxy whose upstream timed out after
   * the request was sent) sets this exchange attribute to {@link #AMBIGUOUS} before it finishes:
   * the exchange is then abandoned, not recorded nor released, so the key stays in progress until
   * its lease ends and no retry can duplicate an effect that did happen. Its response still goes
   * out.
   */
  public static final String OUTCOME = "dev.once.outcome";

  /** See {@link #OUTCOME}. */
  public static final String AMBIGUOUS = "ambiguous";

  private static final byte[] NO_BODY = new byte[0];

  /** The default of {@link Builder#bodyTimeout}: the gateway's {@code request-body-timeout}. */
  public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(10);

  private static final StoredResponse BODY_TIMEOUT =
      Problems.forStatus(408, "The request body did not arrive in time; nothing was executed.");

  private final HttpIdempotency http;
  private final int order;
  private final Duration bodyTimeout;

  private OnceWebFilter(Builder b) {
    this.http = b.http;
    this.order = b.order;
    this.bodyTimeout = b.bodyTimeout;
  }

  /** A filter applying these semantics, in order 0. */
  public static OnceWebFilter of(HttpIdempotency http) {
    return builder(http).build();
  }

  public static Builder builder(HttpIdempotency http) {
    return new Builder(http);
  }

  /**
   * Where the filter runs among the application's: the default, 0, runs it after Spring Security
   * (-100), so requests are authenticated (and their principal known) before they touch the store.
   */
  @Override
  public int getOrder() {
    return order;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    ServerHttpRequest request = exchange.getRequest();
    String method = request.getMethod().name().toUpperCase(Locale.ROOT);
    String path = pathOf(request);
    Route route = http.route(path);
    if (!route.covers(method)) {
      return chain.filter(exchange);
    }
    if (route.decidedWithoutTheBody(
        Responses.headersOf(request.getHeaders()).all(route.policy().keyHeader()))) {
      // No key (nothing to fingerprint nor store, so no store call: the body stays unread for the
      // handler), or a key refused whatever the body (400) before it is read, so a client that
      // sent Expect: 100-continue is never asked for its body.
      return decide(route, incoming(request, method, path, NO_BODY, null))
          .flatMap(decision -> decision.accept(new Unkeyed(exchange, chain)));
    }
    int max = route.policy().maxRequestBytes();
    if (request.getHeaders().getContentLength() > max) {
      return refuseBody(exchange, Problems.bodyTooLarge(max));
    }
    return read(request, max, bodyTimeout)
        .flatMap(
            body ->
                body.refusal() == null
                    ? guard(exchange, chain, route, method, path, body.bytes())
                    : refuseBody(exchange, body.refusal()));
  }

  /** Decides on a request with a key whose whole body was read, and acts on the decision. */
  private Mono<Void> guard(
      ServerWebExchange exchange,
      WebFilterChain chain,
      Route route,
      String method,
      String path,
      byte[] body) {
    return principalOf(exchange)
        .flatMap(
            principal ->
                decide(
                    route,
                    incoming(exchange.getRequest(), method, path, body, principal.orElse(null))))
        .flatMap(decision -> decision.accept(new Keyed(exchange, chain, route, body)));
  }

  /** A body read whole ({@code bytes}), or the problem that refuses it. */
  private record Body(byte[] bytes, @Nullable StoredResponse refusal) {}

  /**
   * The whole body, aggregated as it arrives; refused (413), releasing what was held, at the first
   * byte over {@code max}, or (408) if it has not all arrived within {@code timeout}: Reactor Netty
   * puts no deadline on a request body, so without one a client that stops sending holds its
   * buffers and its connection for ever.
   */
  private static Mono<Body> read(ServerHttpRequest request, int max, Duration timeout) {
    return DataBufferUtils.join(request.getBody(), max)
        .map(
            joined -> {
              try {
                byte[] bytes = new byte[joined.readableByteCount()];
                joined.read(bytes);
                return new Body(bytes, null);
              } finally {
                DataBufferUtils.release(joined);
              }
            })
        .defaultIfEmpty(new Body(NO_BODY, null))
        .timeout(timeout)
        .onErrorResume(
            DataBufferLimitException.class,
            tooLarge -> Mono.just(new Body(NO_BODY, Problems.bodyTooLarge(max))))
        .onErrorResume(TimeoutException.class, late -> Mono.just(new Body(NO_BODY, BODY_TIMEOUT)));
  }

  /** The rest of the body stays unread: the connection cannot be reused. */
  private static Mono<Void> refuseBody(ServerWebExchange exchange, StoredResponse problem) {
    exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close");
    return Responses.write(exchange.getResponse(), problem);
  }

  private static Mono<Optional<String>> principalOf(ServerWebExchange exchange) {
    return exchange
        .getPrincipal()
        .map(Principal::getName)
        .map(Optional::of)
        .defaultIfEmpty(Optional.empty());
  }

  /**
   * Asks the store without a thread waiting for it; the decision (never a failure: see {@link
   * HttpIdempotency#beginAsync}) comes back on a thread the handler may run on.
   *
   * <p>The claim goes on when the client goes away meanwhile (the subscription is cancelled), and
   * may win the key. Its lease must not then be left to heartbeats for as long as the engine runs:
   * whichever comes first, the decision reaching the filter or the cancellation, owns it, and a
   * lease nobody will use is released (no handler ran, so nothing happened).
   */
  private Mono<Decision> decide(Route route, IncomingRequest request) {
    CompletableFuture<Decision> decision = http.beginAsync(route, request).toCompletableFuture();
    AtomicBoolean owned = new AtomicBoolean();
    // A copy, so that cancelling what the filter waits on never cancels the decision itself.
    return Stages.resume(decision.copy())
        .filter(d -> owned.compareAndSet(false, true))
        .doOnCancel(
            () ->
                decision.thenAccept(
                    d -> {
                      if (owned.compareAndSet(false, true)) {
                        releaseUnused(d);
                      }
                    }));
  }

  private static void releaseUnused(Decision decision) {
    decision.accept(
        new Decision.Visitor<Void>() {
          @Override
          public Void proceed(Decision.Proceed proceed) {
            Exchange lease = proceed.exchange();
            lease
                .failAsync()
                .whenComplete(
                    (recording, failure) -> {
                      if (failure != null) {
                        log.error(
                            "releasing the unused lease of key {} failed", lease.key(), failure);
                      }
                    });
            return null;
          }

          @Override
          public Void respond(Decision.Respond respond) {
            return null;
          }

          @Override
          public Void passThrough(Decision.PassThrough passThrough) {
            return null;
          }
        });
  }

  /** What a request without a key comes to: it passes through, or is refused (400). */
  private static final class Unkeyed implements Decision.Visitor<Mono<Void>> {
    private final ServerWebExchange exchange;
    private final WebFilterChain chain;

    Unkeyed(ServerWebExchange exchange, WebFilterChain chain) {
      this.exchange = exchange;
      this.chain = chain;
    }

    @Override
    public Mono<Void> passThrough(Decision.PassThrough passThrough) {
      return chain.filter(exchange);
    }

    @Override
    public Mono<Void> respond(Decision.Respond respond) {
      HttpHeaders headers = exchange.getRequest().getHeaders();
      if (headers.getContentLength() > 0
          || headers.getFirst(HttpHeaders.TRANSFER_ENCODING) != null) {
        // Refused with its body unread: a client that pooled the connection would send its next
        // request into a socket the server is about to close, unless it is told.
        exchange.getResponse().getHeaders().set(HttpHeaders.CONNECTION, "close");
      }
      return Responses.write(exchange.getResponse(), respond.response());
    }

    @Override
    public Mono<Void> proceed(Decision.Proceed proceed) {
      // Only a request with a key is ever claimed. Should one be, the handler has not run: the key
      // is released, and the request refused rather than run without its exchange.
      return Stages.resume(proceed.exchange().failAsync())
          .then(
              Mono.error(
                  new IllegalStateException(
                      "a request without an Idempotency-Key was admitted to run guarded")));
    }
  }

  /** What a request with a key comes to: guarded, answered from the store, or passed through. */
  private static final class Keyed implements Decision.Visitor<Mono<Void>> {
    private final ServerWebExchange exchange;
    private final WebFilterChain chain;
    private final Route route;
    private final byte[] body;

    Keyed(ServerWebExchange exchange, WebFilterChain chain, Route route, byte[] body) {
      this.exchange = exchange;
      this.chain = chain;
      this.route = route;
      this.body = body;
    }

    @Override
    public Mono<Void> proceed(Decision.Proceed proceed) {
      Exchange lease = proceed.exchange();
      CapturingResponse response =
          new CapturingResponse(
              exchange.getResponse(), route.policy().execution().maxResultBytes());
      ServerWebExchange guarded =
          BufferedExchange.of(exchange, body, response, route.policy().maxRequestBytes());
      exchange.getAttributes().put(EXCHANGE, lease);
      // Deferred, so that a filter further down that throws instead of returning an error is
      // one more failure the guarded exchange settles, never a lease left unfinished.
      return new GuardedExchange(lease, response, exchange)
          .run(Mono.defer(() -> chain.filter(guarded)));
    }

    @Override
    public Mono<Void> respond(Decision.Respond respond) {
      return Responses.write(exchange.getResponse(), respond.response());
    }

    @Override
    public Mono<Void> passThrough(Decision.PassThrough passThrough) {
      // Fail-open with the store down: the body was read, so the handler gets it from memory.
      return chain.filter(
          BufferedExchange.of(
              exchange, body, exchange.getResponse(), route.policy().maxRequestBytes()));
    }
  }

  /**
   * The path inside the application, decoded segment by segment as WebFlux matches handlers, so
   * that no spelling of a path ({@code %70ayments}) escapes its route. A slash encoded inside a
   * segment stays encoded: it belongs to one segment, as it does when a handler is matched.
   */
  static String pathOf(ServerHttpRequest request) {
    StringBuilder path = new StringBuilder();
    for (PathContainer.Element e : request.getPath().pathWithinApplication().elements()) {
      if (e instanceof PathContainer.PathSegment segment) {
        path.append(segment.valueToMatch().replace("/", "%2F"));
      } else {
        path.append('/');
      }
    }
    return path.length() == 0 ? "/" : path.toString();
  }

  private static IncomingRequest incoming(
      ServerHttpRequest request,
      String method,
      String path,
      byte[] body,
      @Nullable String principal) {
    return new IncomingRequest(
        method,
        path,
        request.getURI().getRawQuery(),
        Responses.headersOf(request.getHeaders()),
        body,
        principal);
  }

  /** Builds an {@link OnceWebFilter}. */
  public static final class Builder {
    private final HttpIdempotency http;
    private int order;
    private Duration bodyTimeout = DEFAULT_BODY_TIMEOUT;

    private Builder(HttpIdempotency http) {
      this.http = Objects.requireNonNull(http, "http");
    }

    /** Where the filter runs among the application's (default 0); see {@link #getOrder()}. */
    public Builder order(int order) {
      this.order = order;
      return this;
    }

    /**
     * How long a client may take to send the body of a request with a key, which the filter reads
     * whole (default {@link #DEFAULT_BODY_TIMEOUT}); slower gets 408 and the connection is closed.
     */
    public Builder bodyTimeout(Duration bodyTimeout) {
      Objects.requireNonNull(bodyTimeout, "bodyTimeout");
      if (bodyTimeout.isNegative() || bodyTimeout.isZero()) {
        throw new IllegalArgumentException("bodyTimeout must be positive, was " + bodyTimeout);
      }
      this.bodyTimeout = bodyTimeout;
      return this;
    }

    public OnceWebFilter build() {
      return new OnceWebFilter(this);
    }
  }
}

package dev.once.gateway;

import dev.once.http.Decision;
import dev.once.http.Headers;
import dev.once.http.HttpIdempotency;
import dev.once.http.Route;
import dev.once.http.StoredResponse;
import dev.once.internal.HttpToken;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy: one chain of stages over one {@link ProxyExchange}, each handing the exchange to the
 * next without any thread waiting in between.
 *
 * <ol>
 *   <li><b>route</b>: the route of the decoded path; a method it does not cover streams straight to
 *       the upstream;
 *   <li><b>read</b> ({@link BodyReader}): a request with a key is read whole, with demand, under
 *       the route's size limit, the gateway's buffer budget and the body deadline;
 *   <li><b>decide</b> ({@link HttpIdempotency#beginAsync}, no thread waiting for the store):
 *       replay, refuse, or claim the key;
 *   <li><b>forward</b> ({@link Forwarder}): the request goes upstream; a request without a key
 *       whose declared body fits the route's limit has it read whole first, under the same deadline
 *       (so a slow client holds a buffer, never an upstream connection); a larger or chunked body
 *       streams there unread, within {@code upstream-timeout} and at a {@link BodyPace};
 *   <li><b>finish</b> ({@link UpstreamResponse}): the lease is settled, then the client answered.
 * </ol>
 *
 * {@link #handle} only starts the chain and returns: the server's threads serve connections, never
 * wait, so a server runs it on the thread that parsed the request, with no hand-off per request
 * ({@link JettyProxy}). It knows the client only as a {@link ClientHop}.
 */
final class ProxyHandler {

  /** Where a request goes once it may: the upstream ({@link JettyUpstream}). */
  @FunctionalInterface
  interface Forwarder {
    void forward(ProxyExchange exchange);
  }

  private static final Logger log = LoggerFactory.getLogger(ProxyHandler.class);

  /** Methods answered 501, never forwarded: see {@link GatewayProblem#METHOD_NOT_SUPPORTED}. */
  private static final Set<String> NOT_FORWARDED = Set.of("CONNECT", "TRACE");

  /** The answer to {@code OPTIONS *}: the methods the gateway forwards. */
  private static final StoredResponse SERVER_OPTIONS =
      new StoredResponse(
          200, Headers.of("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"), new byte[0]);

  private final HttpIdempotency http;
  private final boolean guarding;
  private final Forwarder upstream;
  private final BufferBudget budget;
  private final Duration bodyTimeout;
  private final Forwarding forwarding;

  ProxyHandler(
      HttpIdempotency http,
      boolean guarding,
      Forwarder upstream,
      BufferBudget budget,
      Duration bodyTimeout,
      Forwarding forwarding) {
    this.http = http;
    this.guarding = guarding;
    this.upstream = upstream;
    this.budget = budget;
    this.bodyTimeout = bodyTimeout;
    this.forwarding = forwarding;
  }

  /** Starts the chain for one request, and returns before any of its asynchronous steps. */
  void handle(ClientHop hop) {
    String path = hop.decodedPath();
    Route route = http.route(path);
    ProxyExchange exchange = new ProxyExchange(hop, path, route, budget, forwarding);
    // The method as it came: upper-casing (the exchange's) can make a token of one that is none.
    if (!HttpToken.is(hop.method(), Integer.MAX_VALUE)) {
      exchange.answer(GatewayProblem.METHOD_MALFORMED.response());
    } else if (NOT_FORWARDED.contains(exchange.method)) {
      exchange.answer(GatewayProblem.METHOD_NOT_SUPPORTED.response());
    } else if (exchange.method.equals("OPTIONS") && "*".equals(hop.path())) {
      // The target of the whole server, which no upstream path can express: the gateway answers.
      exchange.answer(SERVER_OPTIONS);
    } else if (!guarding || !route.covers(exchange.method)) {
      forward(exchange);
    } else if (route.decidedWithoutTheBody(exchange.headers.all(route.policy().keyHeader()))) {
      // No key (nothing to fingerprint nor store: pass through, or 400 if one is required) or a key
      // refused whatever the body (400): answered without a store call and before a byte of the
      // body is read, so a client that sent Expect: 100-continue is never asked for it.
      decide(exchange, http.begin(route, exchange.incoming()));
    } else {
      BodyReader.read(
          exchange,
          route.policy().maxRequestBytes(),
          bodyTimeout,
          body -> {
            exchange.body(body);
            begin(route, exchange)
                .thenAccept(decision -> decide(exchange, decision))
                .exceptionally(
                    failure -> {
                      failed(exchange, failure);
                      return null;
                    });
          });
    }
  }

  /**
   * Asks the store without a thread waiting for it. The decision (never a failure: see {@link
   * HttpIdempotency#beginAsync}) arrives on whichever thread the store answered on (Lettuce's, the
   * embedded store's writer, the engine's store executor, or this one for a store in memory), so
   * everything after it is asynchronous too and never blocks.
   */
  private CompletionStage<Decision> begin(Route route, ProxyExchange exchange) {
    return http.beginAsync(route, exchange.incoming());
  }

  /**
   * A defect between the decision and the upstream (what decides and forwards threw): a lease taken
   * for it is abandoned, not released, since the upstream may have the request; the client gets a
   * 500 if nothing was sent to it yet, else its response is cut. Without this the key would stay in
   * flight for as long as heartbeats ran, and the client would wait for ever.
   */
  private static void failed(ProxyExchange exchange, Throwable failure) {
    log.error("proxying {} failed", exchange, failure);
    exchange.settle(
        Endings.AMBIGUOUS,
        () -> {
          if (exchange.hop.committed()) {
            exchange.complete(failure);
          } else {
            exchange.answer(GatewayProblem.GATEWAY_FAILED.response());
          }
        });
  }

  private void decide(ProxyExchange exchange, Decision decision) {
    decision.accept(
        new Decision.Visitor<Void>() {
          @Override
          public Void respond(Decision.Respond respond) {
            exchange.answer(respond.response());
            return null;
          }

          @Override
          public Void proceed(Decision.Proceed proceed) {
            exchange.guardedBy(proceed.exchange());
            upstream.forward(exchange);
            return null;
          }

          @Override
          public Void passThrough(Decision.PassThrough passThrough) {
            // No key on an optional route, or fail-open with the store down.
            forward(exchange);
            return null;
          }
        });
  }

  /**
   * Forwards a request that holds no lease. A body declared no larger than the route's limit is
   * read whole first, as a keyed one is (budget, deadline, 408): the upstream connection is taken
   * only once the body is here, so clients that trickle their uploads cannot hold the pool's
   * connections while others wait (as nginx buffers request bodies). A body declared larger, or
   * chunked, streams: holding it would cost more memory than a connection.
   */
  private void forward(ProxyExchange exchange) {
    long declared = exchange.hop.declaredLength();
    int max = exchange.route.policy().maxRequestBytes();
    if (exchange.body() != null || declared <= 0 || declared > max) {
      upstream.forward(exchange);
      return;
    }
    BodyReader.read(
        exchange,
        max,
        bodyTimeout,
        body -> {
          exchange.body(body);
          upstream.forward(exchange);
        });
  }
}

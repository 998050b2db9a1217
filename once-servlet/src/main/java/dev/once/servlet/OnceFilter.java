package dev.once.servlet;

import dev.once.Outcome;
import dev.once.http.Decision;
import dev.once.http.Exchange;
import dev.once.http.Headers;
import dev.once.http.HttpIdempotency;
import dev.once.http.IncomingRequest;
import dev.once.http.Problems;
import dev.once.http.Route;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A servlet {@link Filter} that gives every route of an application the idempotency semantics of
 * {@link HttpIdempotency} (DESIGN §4): retries replay the first response, a reused key is refused,
 * duplicates in flight are told to wait, and transient failures release the key.
 *
 * <pre>{@code
 * HttpIdempotency http = HttpIdempotency.builder(once)
 *     .route("/api/payments", RoutePolicy.builder().keyRequired(true).build())
 *     .build();
 * FilterRegistration.Dynamic f = servletContext.addFilter("once", OnceFilter.of(http));
 * f.setAsyncSupported(true);
 * f.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC), false, "/*");
 * }</pre>
 *
 * <p>Map it for {@code REQUEST} and {@code ASYNC} dispatches, with async support on: a handler that
 * goes asynchronous is recorded when its response completes, and an {@code AsyncContext.dispatch()}
 * is followed into the dispatched handler.
 *
 * <p>On a covered request that carries a key, the filter reads the body (at most the route's {@code
 * maxRequestBytes}, else 413), hands the handler a request that still has it, and holds the
 * handler's response until the handler finishes, so it can be recorded and then sent. A handler
 * that keeps writing after a flush, or writes more than the route's {@code maxResultBytes}, is
 * streamed to the client as it writes; it counts as done, and its retries are answered 409 {@code
 * idempotency-response-unavailable}. See {@code docs/http.md}.
 */
public final class OnceFilter implements Filter {

  /** The request attribute holding the exchange of a request this filter is guarding. */
  static final String EXCHANGE_ATTRIBUTE = OnceFilter.class.getName() + ".exchange";

  /**
   * The request attribute under which the handler finds the {@link dev.once.http.Exchange} it runs
   * for: its scope and fencing token, to pass on to systems that can settle retries themselves (the
   * gateway forwards them upstream).
   */
  public static final String EXCHANGE = "dev.once.http.Exchange";

  /**
   * A handler that cannot tell whether its effect happened (a proxy whose upstream timed out after
   * the request was sent) sets this request attribute to {@link #AMBIGUOUS} before it finishes: the
   * exchange is then abandoned, not recorded nor released, so the key stays in progress until its
   * lease ends and no retry can duplicate an effect that did happen. Its response still goes out.
   */
  public static final String OUTCOME = "dev.once.outcome";

  /** See {@link #OUTCOME}. */
  public static final String AMBIGUOUS = "ambiguous";

  /**
   * A framework that routes requests sets {@link #OUTCOME} to this when no handler took the request
   * (Spring MVC's 404 for an unmapped path, 405 for an unmapped method): nothing ran, so the key is
   * released and the framework's answer goes out unrecorded. A handler's own 404 is recorded as the
   * route says; only the router's is not.
   */
  public static final String NOT_HANDLED = "not-handled";

  /**
   * The exchange of a request this filter must guard; empty for one it answers or passes through.
   */
  private static final Decision.Visitor<Optional<Exchange>> ADMITTED =
      new Decision.Visitor<>() {
        @Override
        public Optional<Exchange> proceed(Decision.Proceed proceed) {
          return Optional.of(proceed.exchange());
        }

        @Override
        public Optional<Exchange> respond(Decision.Respond respond) {
          return Optional.empty();
        }

        @Override
        public Optional<Exchange> passThrough(Decision.PassThrough passThrough) {
          return Optional.empty();
        }
      };

  private final HttpIdempotency http;
  private final TransactionBoundary transactions;

  private OnceFilter(Builder b) {
    this.http = b.http;
    this.transactions = b.transactions;
  }

  /** A filter applying these semantics, every store call committing on its own. */
  public static OnceFilter of(HttpIdempotency http) {
    return builder(http).build();
  }

  public static Builder builder(HttpIdempotency http) {
    return new Builder(http);
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request)
        || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    if (request.getDispatcherType() == DispatcherType.ASYNC) {
      continueAsync(request, response, chain);
    } else if (request.getDispatcherType() != DispatcherType.REQUEST
        || request.getAttribute(EXCHANGE_ATTRIBUTE) != null) {
      // Forwards, includes and error pages belong to a request that was already judged.
      chain.doFilter(request, response);
    } else {
      guard(request, response, chain);
    }
  }

  private void guard(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    String path = pathOf(request);
    Route route = http.route(path);
    String method = request.getMethod().toUpperCase(Locale.ROOT);
    if (!route.covers(method)) {
      chain.doFilter(request, response);
      return;
    }
    if (route.decidedWithoutTheBody(
        Collections.list(request.getHeaders(route.policy().keyHeader())))) {
      // No key (nothing to fingerprint nor store: the body stays unread for the handler to stream),
      // or a key refused whatever the body (400) before it is read, so a client that sent Expect:
      // 100-continue is never asked for its body.
      http.begin(route, incoming(request, method, path, new byte[0]))
          .accept(
              new Decision.Visitor<Send>() {
                @Override
                public Send respond(Decision.Respond respond) {
                  return () -> {
                    if (request.getContentLengthLong() > 0
                        || request.getHeader("Transfer-Encoding") != null) {
                      // Refused with its body unread: the server may close the connection once the
                      // answer is sent, and a client that pooled it would send its next request
                      // into a closed socket.
                      response.setHeader("Connection", "close");
                    }
                    Responses.write(response, respond.response());
                  };
                }

                @Override
                public Send passThrough(Decision.PassThrough passThrough) {
                  return () -> chain.doFilter(request, response);
                }

                @Override
                public Send proceed(Decision.Proceed proceed) {
                  // Only a request with a key is ever claimed. Should one be, the handler has not
                  // run: the key is released, and the request refused rather than run without its
                  // exchange.
                  proceed.exchange().fail();
                  throw new IllegalStateException(
                      "a request without an Idempotency-Key was admitted to run guarded");
                }
              })
          .run();
      return;
    }
    byte[] body = RequestBody.read(request, route.policy().maxRequestBytes());
    if (body == null) {
      // The rest of the body stays unread: the connection cannot be reused.
      response.setHeader("Connection", "close");
      Responses.write(response, Problems.bodyTooLarge(route.policy().maxRequestBytes()));
      return;
    }
    Attempt attempt =
        new Attempt(
            route,
            new BufferedRequest(request, body),
            response,
            chain,
            incoming(request, method, path, body));
    if (transactions.covers(route)) {
      transactions.run(route, () -> attempt.run(true));
    } else {
      attempt.run(false);
    }
    attempt.send();
  }

  /** A dispatch from {@code AsyncContext.dispatch()}: the handler may finish the response now. */
  private static void continueAsync(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request.getAttribute(EXCHANGE_ATTRIBUTE) instanceof GuardedExchange guard)) {
      chain.doFilter(request, response);
      return;
    }
    runHandler(guard, request, response, chain);
    if (!request.isAsyncStarted()) {
      guard.finish();
    }
  }

  private static void runHandler(
      GuardedExchange guard,
      HttpServletRequest request,
      HttpServletResponse response,
      FilterChain chain)
      throws IOException, ServletException {
    try {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException | Error e) {
      if (request.isAsyncStarted()) {
        guard.failWhileWorkMayRun();
      } else {
        guard.fail(e);
      }
      throw e;
    }
  }

  /**
   * One request with a key: {@link #run} decides, runs the handler and records its outcome (inside
   * a transaction if the route has one); {@link #send} then answers the client.
   */
  private final class Attempt {
    private final Route route;
    private final BufferedRequest request;
    private final HttpServletResponse response;
    private final FilterChain chain;
    private final IncomingRequest incoming;
    private @Nullable Decision decision;
    private @Nullable GuardedExchange guard;
    private boolean async;

    Attempt(
        Route route,
        BufferedRequest request,
        HttpServletResponse response,
        FilterChain chain,
        IncomingRequest incoming) {
      this.route = route;
      this.request = request;
      this.response = response;
      this.chain = chain;
      this.incoming = incoming;
    }

    /**
     * @param inTransaction whether this runs inside the route's {@link TransactionBoundary}, which
     *     rolls back every ending this returns as {@link TransactionBoundary.Ending#ROLL_BACK} and
     *     every exception: exactly the transient outcomes, whose release is then that rollback
     */
    TransactionBoundary.Ending run(boolean inTransaction) throws IOException, ServletException {
      decision = http.begin(route, incoming);
      Optional<Exchange> admitted = decision.accept(ADMITTED);
      if (admitted.isEmpty()) {
        // A replay or a problem only read; a pass-through (fail-open) runs after.
        return TransactionBoundary.Ending.ROLL_BACK;
      }
      Exchange exchange = inTransaction ? admitted.get().releasedByRollback() : admitted.get();
      guard =
          new GuardedExchange(
              exchange,
              request,
              new CapturingResponse(
                  response, request, route.policy().execution().maxResultBytes()));
      request.guardedBy(guard);
      request.setAttribute(EXCHANGE_ATTRIBUTE, guard);
      request.setAttribute(EXCHANGE, exchange);
      runHandler(guard, request, guard.response(), chain);
      if (request.isAsyncStarted()) {
        if (inTransaction) {
          IllegalStateException misuse =
              new IllegalStateException(
                  "the handler of "
                      + route
                      + " went asynchronous,"
                      + " but the route runs in a transaction bound to the request thread; answer synchronously on"
                      + " transactional routes");
          guard.fail(misuse);
          throw misuse;
        }
        // It finishes on AsyncContext.complete(), after a dispatch, or on a timeout or error.
        async = true;
        return TransactionBoundary.Ending.COMMIT;
      }
      return guard.record() == Outcome.TRANSIENT
          ? TransactionBoundary.Ending.ROLL_BACK
          : TransactionBoundary.Ending.COMMIT;
    }

    void send() throws IOException, ServletException {
      Objects.requireNonNull(decision, "send() follows run()")
          .accept(
              new Decision.Visitor<Send>() {
                @Override
                public Send proceed(Decision.Proceed proceed) {
                  // An asynchronous handler is sent when it completes, by its GuardedExchange.
                  return () -> {
                    if (!async) {
                      Objects.requireNonNull(guard, "a proceeding attempt has its guard").send();
                    }
                  };
                }

                @Override
                public Send respond(Decision.Respond respond) {
                  return () -> Responses.write(response, respond.response());
                }

                @Override
                public Send passThrough(Decision.PassThrough passThrough) {
                  return () -> chain.doFilter(request, response);
                }
              })
          .run();
    }
  }

  /**
   * The path inside the application as the container decoded and normalised it, so that routes
   * match the way servlet mappings do and no spelling of a path ({@code %70ayments}) escapes its
   * route.
   */
  static String pathOf(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.isEmpty() ? "/" : path;
  }

  private static IncomingRequest incoming(
      HttpServletRequest request, String method, String path, byte[] body) {
    Headers.Builder headers = Headers.builder();
    for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements(); ) {
      String name = names.nextElement();
      for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements(); ) {
        headers.add(name, values.nextElement());
      }
    }
    Principal principal = request.getUserPrincipal();
    return new IncomingRequest(
        method,
        path,
        request.getQueryString(),
        headers.build(),
        body,
        principal == null ? null : principal.getName());
  }

  /**
   * What a decision makes the filter do to the servlet response. A decision is mapped to one before
   * it runs because the container's calls throw checked exceptions that a visitor cannot.
   */
  @FunctionalInterface
  private interface Send {
    void run() throws IOException, ServletException;
  }

  /** Builds an {@link OnceFilter}. */
  public static final class Builder {
    private final HttpIdempotency http;
    private TransactionBoundary transactions = TransactionBoundary.NONE;

    private Builder(HttpIdempotency http) {
      this.http = Objects.requireNonNull(http, "http");
    }

    /**
     * Runs the routes it covers in one transaction each (default {@link TransactionBoundary#NONE}).
     */
    public Builder transactions(TransactionBoundary transactions) {
      this.transactions = Objects.requireNonNull(transactions, "transactions");
      return this;
    }

    public OnceFilter build() {
      return new OnceFilter(this);
    }
  }
}

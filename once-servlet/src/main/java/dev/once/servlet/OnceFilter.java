package dev.once.servlet;

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
import java.util.Enumeration;
import java.util.Locale;
import java.util.Objects;

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
 * <p>On a covered request that carries a key, the filter reads the body (at most the route's
 * {@code maxRequestBytes}, else 413), hands the handler a request that still has it, and holds the
 * handler's response until the handler finishes, so it can be recorded and then sent. A handler that
 * keeps writing after a flush, or writes more than the route's {@code maxResultBytes}, is streamed to
 * the client as it writes; it counts as done, and its retries are answered 409
 * {@code idempotency-response-unavailable}. See {@code docs/http.md}.
 */
public final class OnceFilter implements Filter {

  /** The request attribute holding the exchange of a request this filter is guarding. */
  static final String EXCHANGE_ATTRIBUTE = OnceFilter.class.getName() + ".exchange";

  private final HttpIdempotency http;

  private OnceFilter(HttpIdempotency http) {
    this.http = Objects.requireNonNull(http, "http");
  }

  /** A filter applying these semantics. */
  public static OnceFilter of(HttpIdempotency http) {
    return new OnceFilter(http);
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
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
    if (!route.policy().covers(method)) {
      chain.doFilter(request, response);
      return;
    }
    byte[] body = null;
    HttpServletRequest forwarded = request;
    // Without a key nothing is fingerprinted, so the body is left for the handler to stream.
    if (request.getHeader(HttpIdempotency.KEY_HEADER) != null) {
      body = RequestBody.read(request, route.policy().maxRequestBytes());
      if (body == null) {
        // The rest of the body stays unread: the connection cannot be reused.
        response.setHeader("Connection", "close");
        Responses.write(response, Problems.bodyTooLarge(route.policy().maxRequestBytes()));
        return;
      }
      forwarded = new BufferedRequest(request, body);
    }
    Decision decision = http.begin(route, incoming(request, method, path, body));
    if (decision instanceof Decision.Proceed p) {
      proceed(p.exchange(), route, (BufferedRequest) forwarded, response, chain);
    } else if (decision instanceof Decision.Respond r) {
      Responses.write(response, r.response());
    } else {
      chain.doFilter(forwarded, response);
    }
  }

  private static void proceed(Exchange exchange, Route route, BufferedRequest request,
      HttpServletResponse response, FilterChain chain) throws IOException, ServletException {
    CapturingResponse capture = new CapturingResponse(response, request,
        route.policy().execution().maxResultBytes());
    GuardedExchange guard = new GuardedExchange(exchange, capture, route.policy().classifier());
    request.guardedBy(guard);
    request.setAttribute(EXCHANGE_ATTRIBUTE, guard);
    run(guard, request, capture, chain);
  }

  /**
   * Runs the handler and finishes the exchange, unless the handler went asynchronous: then it
   * finishes on {@code AsyncContext.complete()}, after a dispatch, or on a timeout or error.
   */
  private static void run(GuardedExchange guard, HttpServletRequest request, HttpServletResponse response,
      FilterChain chain) throws IOException, ServletException {
    try {
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException | Error e) {
      guard.fail();
      throw e;
    }
    if (!request.isAsyncStarted()) {
      guard.finish();
    }
  }

  /** A dispatch from {@code AsyncContext.dispatch()}: the handler may finish the response now. */
  private static void continueAsync(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request.getAttribute(EXCHANGE_ATTRIBUTE) instanceof GuardedExchange guard)) {
      chain.doFilter(request, response);
      return;
    }
    run(guard, request, response, chain);
  }

  /**
   * The path inside the application as the container decoded and normalised it, so that routes
   * match the way servlet mappings do and no spelling of a path ({@code %70ayments}) escapes its route.
   */
  static String pathOf(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.isEmpty() ? "/" : path;
  }

  private static IncomingRequest incoming(HttpServletRequest request, String method, String path, byte[] body) {
    Headers.Builder headers = Headers.builder();
    for (Enumeration<String> names = request.getHeaderNames(); names.hasMoreElements(); ) {
      String name = names.nextElement();
      for (Enumeration<String> values = request.getHeaders(name); values.hasMoreElements(); ) {
        headers.add(name, values.nextElement());
      }
    }
    Principal principal = request.getUserPrincipal();
    return new IncomingRequest(method, path, request.getQueryString(), headers.build(), body,
        principal == null ? null : principal.getName());
  }
}

package dev.once.servlet;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stands for the filters an application runs in front of {@link OnceFilter}: it gives every
 * response its own request id and, for a cross-origin request, the CORS header for that origin,
 * before the rest of the chain runs. These headers belong to each request, never to a replay.
 */
final class FakeOuterFilter implements Filter {

  static final String REQUEST_ID = "X-Request-Id";
  static final String ALLOW_ORIGIN = "Access-Control-Allow-Origin";

  /**
   * The response this thread is serving, for hooks inside the chain that ask whether it has left.
   */
  static final ThreadLocal<HttpServletResponse> CURRENT = new ThreadLocal<>();

  private final AtomicLong ids = new AtomicLong();

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletResponse response = (HttpServletResponse) res;
    response.setHeader(REQUEST_ID, "req-" + ids.incrementAndGet());
    String origin = ((HttpServletRequest) req).getHeader("Origin");
    if (origin != null) {
      response.setHeader(ALLOW_ORIGIN, origin);
      response.addHeader("Vary", "Origin");
    }
    CURRENT.set(response);
    try {
      chain.doFilter(req, res);
    } finally {
      CURRENT.remove();
    }
  }
}

package dev.once.servlet;

import dev.once.http.kit.ReferenceApi;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Map;

/**
 * The kit's {@link ReferenceApi} as a servlet: a {@link ReferenceApi.HandlerFailure} propagates.
 */
final class ReferenceServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  private final transient ReferenceApi api;

  ReferenceServlet(ReferenceApi api) {
    this.api = api;
  }

  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    ReferenceApi.Reply reply;
    try {
      reply =
          api.handle(
              new ReferenceApi.Call(
                  req.getMethod(),
                  OnceFilter.pathOf(req),
                  req.getQueryString(),
                  req.getInputStream().readAllBytes()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted");
    }
    resp.setStatus(reply.status());
    for (Map.Entry<String, String> h : reply.headers()) {
      resp.addHeader(h.getKey(), h.getValue());
    }
    resp.setContentLength(reply.body().length);
    resp.getOutputStream().write(reply.body());
  }
}

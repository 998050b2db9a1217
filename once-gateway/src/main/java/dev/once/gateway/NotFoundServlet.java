package dev.once.gateway;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Everything on the management port that is not an endpoint (including {@code /admin} while it is
 * off).
 */
final class NotFoundServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setStatus(404);
    response.setContentType("application/json");
    response
        .getOutputStream()
        .write(
            "{\"error\":\"not found; endpoints: /health, /metrics, /admin (when a token is set)\"}"
                .getBytes(StandardCharsets.UTF_8));
  }
}

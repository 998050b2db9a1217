package dev.once.gateway;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Everything on the management port that is not an endpoint (including {@code /admin} and {@code
 * /console} while they are off).
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
            "{\"error\":\"not found; endpoints: /health, /metrics, /admin and /console (when a token is set)\"}"
                .getBytes(StandardCharsets.UTF_8));
  }
}

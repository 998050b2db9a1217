package dev.once.gateway;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** {@code GET /metrics}: every meter in the Prometheus text format. */
final class MetricsServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  private final transient PrometheusMeterRegistry registry;

  MetricsServlet(PrometheusMeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    response.setContentType("text/plain; version=0.0.4; charset=utf-8");
    response.setHeader("Cache-Control", "no-store");
    response.getOutputStream().write(registry.scrape().getBytes(StandardCharsets.UTF_8));
  }
}

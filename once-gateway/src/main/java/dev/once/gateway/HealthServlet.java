package dev.once.gateway;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /health}: 200 when the store answers a read, 503 when it does not. Every store bounds
 * its own calls, so the check answers in bounded time. Only the store is checked: an upstream that
 * is down is the upstream's health, and the gateway still answers replays without it.
 */
final class HealthServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  /** A record nobody writes: reading it exercises the store's connection and query path. */
  private static final RecordId PROBE =
      RecordId.of(Scope.of("_once", "health"), IdempotencyKey.of("probe"));

  private final transient IdempotencyStore store;

  HealthServlet(IdempotencyStore store) {
    this.store = store;
  }

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    boolean up;
    try {
      store.get(PROBE);
      up = true;
    } catch (RuntimeException e) {
      up = false;
    }
    response.setStatus(up ? 200 : 503);
    response.setContentType("application/json");
    response.setHeader("Cache-Control", "no-store");
    response
        .getOutputStream()
        .write(
            (up
                    ? "{\"status\":\"UP\",\"store\":\"UP\"}"
                    : "{\"status\":\"DOWN\",\"store\":\"DOWN\"}")
                .getBytes(StandardCharsets.UTF_8));
  }
}

package dev.once.client;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The application: counts how often each path's handler really ran, so that tests assert effects
 * rather than the client's word. Behaviour by path:
 *
 * <ul>
 *   <li>{@code .../pay}: 201 with {@code {"effect":n}}; under {@code /slow/} after {@code ?ms=};
 *   <li>{@code /flaky/{status}?times=n[&ra=s]}: the first {@code n} runs per key answer {@code
 *       status} (with {@code Retry-After: s}), later ones 201;
 *   <li>{@code /status/{status}}: always that status, with a small JSON body;
 *   <li>{@code /problem409}: the application's own 409 problem.
 * </ul>
 */
final class CountingServlet extends HttpServlet {

  private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> perKey = new ConcurrentHashMap<>();
  private final Map<String, String> lastKey = new ConcurrentHashMap<>();

  int executions(String path) {
    AtomicInteger n = executions.get(path);
    return n == null ? 0 : n.get();
  }

  /**
   * The {@code Idempotency-Key} header the last request to {@code path} carried, or "" for none.
   */
  String lastKey(String path) {
    return lastKey.getOrDefault(path, "");
  }

  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String path = req.getRequestURI();
    int n = executions.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    String key = req.getHeader("Idempotency-Key");
    lastKey.put(path, key == null ? "" : key);
    String[] parts = path.split("/");
    if (path.endsWith("/pay")) {
      if (req.getParameter("ms") != null) {
        sleep(Long.parseLong(req.getParameter("ms")));
      }
      write(
          resp,
          201,
          "application/json",
          "{\"effect\":" + n + ",\"padding\":\"more than sixteen bytes\"}");
    } else if (path.startsWith("/flaky/")) {
      int times = Integer.parseInt(req.getParameter("times"));
      int run =
          perKey.computeIfAbsent(path + " " + key, k -> new AtomicInteger()).incrementAndGet();
      if (run <= times) {
        if (req.getParameter("ra") != null) {
          resp.setHeader("Retry-After", req.getParameter("ra"));
        }
        write(resp, Integer.parseInt(parts[2]), "text/plain", "not now");
      } else {
        write(resp, 201, "application/json", "{\"run\":" + run + "}");
      }
    } else if (path.startsWith("/status/")) {
      write(resp, Integer.parseInt(parts[2]), "application/json", "{\"status\":" + parts[2] + "}");
    } else if (path.equals("/problem409")) {
      write(
          resp,
          409,
          "application/problem+json",
          "{\"title\":\"Out of stock\",\"type\":\"https://shop.example/out-of-stock\",\"status\":409}");
    } else {
      write(resp, 404, "text/plain", "no such path");
    }
  }

  private static void write(HttpServletResponse resp, int status, String type, String body)
      throws IOException {
    resp.setStatus(status);
    resp.setContentType(type);
    resp.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

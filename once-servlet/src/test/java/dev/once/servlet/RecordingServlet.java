package dev.once.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An application whose behaviour is chosen by the path, and which counts how often each path's
 * handler really ran: the e2e tests assert that count, never the filter's word.
 */
final class RecordingServlet extends HttpServlet {

  private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
  private final AtomicInteger payments = new AtomicInteger();
  private final ExecutorService async =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "fake-async");
            t.setDaemon(true);
            return t;
          });

  private volatile String lastFailure = "";

  /** The message of the last failure a handler saw. */
  String lastFailure() {
    return lastFailure;
  }

  int executions(String path) {
    AtomicInteger n = executions.get(path);
    return n == null ? 0 : n.get();
  }

  int totalExecutions() {
    return executions.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  void shutdown() {
    async.shutdownNow();
  }

  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String path = OnceFilter.pathOf(req);
    if (req.getDispatcherType() == jakarta.servlet.DispatcherType.ASYNC) {
      dispatched(req, resp);
      return;
    }
    executions.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
    // The behaviour is the segment after "api", so that a prefix (/small, /wait) only picks the
    // route.
    String[] all = path.split("/");
    int api = java.util.Arrays.asList(all).indexOf("api");
    String[] parts = java.util.Arrays.copyOfRange(all, Math.max(0, api - 1), all.length);
    switch (parts.length > 2 ? parts[2] : "") {
      case "payments" -> payment(req, resp);
      case "status" -> {
        resp.setStatus(Integer.parseInt(parts[3]));
        resp.setContentType("text/plain");
        resp.getOutputStream().write(("status " + parts[3]).getBytes(StandardCharsets.US_ASCII));
      }
      case "error" -> resp.sendError(Integer.parseInt(parts[3]), "because " + parts[3]);
      case "throw" -> throw new IllegalStateException("the handler failed");
      case "ambiguous-throw" -> {
        // Like a proxy whose upstream connection broke after the request was sent, and which
        // throws.
        req.setAttribute(OnceFilter.OUTCOME, OnceFilter.AMBIGUOUS);
        throw new IllegalStateException("the upstream went away mid-request");
      }
      case "slow" -> {
        sleep(Long.parseLong(req.getParameter("ms")));
        payment(req, resp);
      }
      case "big" -> {
        resp.setContentType("application/octet-stream");
        byte[] chunk = new byte[1000];
        java.util.Arrays.fill(chunk, (byte) 'x');
        int bytes = Integer.parseInt(req.getParameter("bytes"));
        ServletOutputStream out = resp.getOutputStream();
        for (int sent = 0; sent < bytes; sent += chunk.length) {
          out.write(chunk, 0, Math.min(chunk.length, bytes - sent));
        }
      }
      case "big-then-hold" -> {
        // The whole body, with its length, reaches the client; then the handler keeps running.
        int bytes = Integer.parseInt(req.getParameter("bytes"));
        byte[] body = new byte[bytes];
        java.util.Arrays.fill(body, (byte) 'x');
        resp.setContentType("application/octet-stream");
        resp.setContentLength(bytes);
        ServletOutputStream out = resp.getOutputStream();
        out.write(body);
        out.flush();
        sleep(Long.parseLong(req.getParameter("ms")));
      }
      case "stream" -> {
        resp.setContentType("text/plain");
        ServletOutputStream out = resp.getOutputStream();
        out.write("first;".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        sleep(100);
        out.write("second".getBytes(StandardCharsets.US_ASCII));
      }
      case "flush-at-end" -> {
        // What Spring MVC does for a ResponseEntity: write everything, then flush the response.
        resp.setStatus(201);
        resp.setContentType("application/json");
        ServletOutputStream out = resp.getOutputStream();
        out.write("{\"ok\":true}".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        resp.flushBuffer();
      }
      case "writer" -> {
        resp.setContentType("text/plain; charset=UTF-8");
        PrintWriter w = resp.getWriter();
        w.print("Grüße, ");
        w.print("€ ");
        w.print(readBody(req).length);
      }
      case "redirect" -> resp.sendRedirect("/api/payments/42");
      case "nocontent" -> resp.setStatus(204);
      case "form" -> {
        resp.setContentType("text/plain; charset=UTF-8");
        resp.getWriter()
            .print(
                new TreeMap<>(req.getParameterMap())
                    .entrySet().stream()
                        .map(e -> e.getKey() + "=" + String.join(",", e.getValue()))
                        .reduce((a, b) -> a + "&" + b)
                        .orElse(""));
      }
      case "reader" -> {
        resp.setContentType("text/plain; charset=UTF-8");
        StringBuilder sb = new StringBuilder();
        char[] buf = new char[64];
        for (int n; (n = req.getReader().read(buf)) > 0; ) {
          sb.append(buf, 0, n);
        }
        resp.getWriter().print(sb);
      }
      case "async" -> async(req, resp, parts.length > 3 ? parts[3] : "");
      case "exchange" -> {
        dev.once.http.Exchange exchange =
            (dev.once.http.Exchange) req.getAttribute(OnceFilter.EXCHANGE);
        resp.setStatus(200);
        resp.getWriter().print(exchange.scope().value() + " " + exchange.token());
      }
      case "parts" -> {
        try {
          req.getParts();
        } catch (jakarta.servlet.ServletException e) {
          lastFailure = e.getMessage();
          throw new IllegalStateException(e);
        }
      }
      default -> payment(req, resp);
    }
  }

  /** A payment: 201 with an id that changes on every execution, and headers worth replaying. */
  private void payment(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    byte[] body = readBody(req);
    int n = payments.incrementAndGet();
    resp.setStatus(201);
    resp.setContentType("application/json");
    resp.setHeader("Location", "/api/payments/pay_" + n);
    resp.addHeader("X-Multi", "one");
    resp.addHeader("X-Multi", "two");
    resp.addHeader("Vary", "Accept"); // joins an outer filter's Vary, if there is one
    resp.addCookie(new Cookie("session", "s" + n));
    resp.getOutputStream()
        .write(
            ("{\"id\":\"pay_" + n + "\",\"received_bytes\":" + body.length + "}")
                .getBytes(StandardCharsets.UTF_8));
  }

  private void async(HttpServletRequest req, HttpServletResponse resp, String mode) {
    AsyncContext ctx = req.startAsync();
    switch (mode) {
      case "complete" ->
          async.submit(
              () -> {
                sleep(
                    req.getParameter("ms") == null ? 100 : Long.parseLong(req.getParameter("ms")));
                try {
                  payment(req, resp);
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
                ctx.complete();
              });
      case "context-response" ->
          async.submit(
              () -> {
                sleep(50);
                HttpServletResponse r = (HttpServletResponse) ctx.getResponse();
                r.setStatus(202);
                try {
                  r.getOutputStream().write("accepted".getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
                ctx.complete();
              });
      case "dispatch" ->
          async.submit(
              () -> {
                sleep(100);
                req.setAttribute("result", "pay_" + payments.incrementAndGet());
                ctx.dispatch();
              });
      case "server-error" ->
          async.submit(
              () -> {
                sleep(50);
                resp.setStatus(503);
                ctx.complete();
              });
      case "timeout" -> ctx.setTimeout(200);
      case "throw" -> {
        // Work handed to another thread may still run; the handler's own thread then fails.
        ctx.setTimeout(0);
        throw new IllegalStateException("the handler failed after going asynchronous");
      }
      case "ambiguous" ->
          async.submit(
              () -> {
                sleep(50);
                // Like a proxy whose upstream timed out after the request was sent.
                req.setAttribute(OnceFilter.OUTCOME, OnceFilter.AMBIGUOUS);
                resp.setStatus(504);
                ctx.complete();
              });
      default -> throw new IllegalArgumentException(mode);
    }
  }

  /** The second half of an async request: the result computed on another thread is written here. */
  private void dispatched(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    Object result = req.getAttribute("result");
    if (result == null) {
      return; // a timeout's error dispatch: the container answers
    }
    resp.setStatus(201);
    resp.setContentType("application/json");
    resp.getOutputStream().write(("{\"id\":\"" + result + "\"}").getBytes(StandardCharsets.UTF_8));
  }

  private static byte[] readBody(HttpServletRequest req) throws IOException {
    return req.getInputStream().readAllBytes();
  }

  private static void sleep(long ms) {
    try {
      TimeUnit.MILLISECONDS.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

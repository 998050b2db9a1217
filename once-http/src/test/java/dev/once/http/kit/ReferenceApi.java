package dev.once.http.kit;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The application every adapter hosts for {@link HttpSemanticsContract}: framework-neutral, its
 * behaviour chosen by the path, counting how often each path's handler really ran (the kit asserts
 * that count, never the adapter's word). Adapters translate their request into a {@link Call} and
 * write the {@link Reply} back; a servlet or controller lets {@link HandlerFailure} propagate, a
 * proxied upstream answers 500 as its framework would.
 *
 * <p>The behaviour is the segment after {@code api}, so a prefix ({@code /small}, {@code /wait})
 * only picks the route: {@code payments} answers 201 with a new id; {@code status/N} answers N;
 * {@code throw} throws; {@code slow?ms=N} answers a payment after N ms; {@code big?bytes=N} answers
 * N bytes; {@code hop} answers with headers named in {@code Connection}.
 */
public final class ReferenceApi {

  /** What an adapter saw: the method, the path inside the application, the raw query, the body. */
  public record Call(String method, String path, String query, byte[] body) {}

  /** What the adapter writes back: status, headers in order (a name may repeat), body. */
  public record Reply(int status, List<Map.Entry<String, String>> headers, byte[] body) {
    public Reply {
      headers = List.copyOf(headers);
    }
  }

  /** Thrown by the {@code throw} behaviour: the handler failed before writing anything. */
  public static final class HandlerFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HandlerFailure() {
      super("the handler failed (on purpose)");
    }
  }

  private final Map<String, AtomicInteger> executions = new ConcurrentHashMap<>();
  private final AtomicInteger payments = new AtomicInteger();

  /** How often the handler of {@code path} ran. */
  public int executions(String path) {
    AtomicInteger n = executions.get(path);
    return n == null ? 0 : n.get();
  }

  /** How often any handler ran. */
  public int totalExecutions() {
    return executions.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  /** Runs the handler of {@code call.path()}; blocks for the {@code slow} behaviour. */
  public Reply handle(Call call) throws InterruptedException {
    executions.computeIfAbsent(call.path(), p -> new AtomicInteger()).incrementAndGet();
    List<String> parts = Arrays.asList(call.path().split("/"));
    int api = parts.indexOf("api");
    String kind = api >= 0 && api + 1 < parts.size() ? parts.get(api + 1) : "";
    return switch (kind) {
      case "status" -> text(Integer.parseInt(parts.get(api + 2)), "status " + parts.get(api + 2));
      case "throw" -> throw new HandlerFailure();
      case "slow" -> {
        Thread.sleep(Long.parseLong(param(call.query(), "ms", "1000")));
        yield payment(call);
      }
      case "big" -> {
        byte[] body = new byte[Integer.parseInt(param(call.query(), "bytes", "10000"))];
        Arrays.fill(body, (byte) 'x');
        yield new Reply(200, List.of(Map.entry("Content-Type", "application/octet-stream")), body);
      }
      case "hop" ->
          new Reply(
              200,
              List.of(
                  Map.entry("Content-Type", "text/plain"),
                  Map.entry("Connection", "X-Hop"),
                  Map.entry("X-Hop", "only for the next hop"),
                  Map.entry("X-Kept", "end to end")),
              "hop".getBytes(StandardCharsets.US_ASCII));
      default -> payment(call);
    };
  }

  private Reply payment(Call call) {
    int id = payments.incrementAndGet();
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    headers.add(Map.entry("Content-Type", "application/json"));
    headers.add(Map.entry("Location", "/payments/pay_" + id));
    headers.add(Map.entry("Set-Cookie", "session=s" + id));
    headers.add(Map.entry("X-Multi", "one"));
    headers.add(Map.entry("X-Multi", "two"));
    String json = "{\"id\":\"pay_" + id + "\",\"received_bytes\":" + call.body().length + "}";
    return new Reply(201, headers, json.getBytes(StandardCharsets.UTF_8));
  }

  private static Reply text(int status, String text) {
    return new Reply(
        status,
        List.of(Map.entry("Content-Type", "text/plain")),
        text.getBytes(StandardCharsets.US_ASCII));
  }

  private static String param(String query, String name, String otherwise) {
    if (query != null) {
      for (String pair : query.split("&")) {
        if (pair.startsWith(name + "=")) {
          return pair.substring(name.length() + 1);
        }
      }
    }
    return otherwise;
  }
}

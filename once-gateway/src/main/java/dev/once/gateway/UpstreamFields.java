package dev.once.gateway;

import dev.once.IdempotencyKey;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.http.Exchange;
import dev.once.http.Headers;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;

/**
 * What a request looks like on its way upstream, whatever client carries it: what idempotency needs
 * from a proxy.
 *
 * <ul>
 *   <li><b>key chaining</b>: the key goes upstream in one canonical spelling, with the scope as
 *       {@code Once-Scope} and the lease's fencing token as {@code Once-Token}, so an idempotent
 *       upstream can settle retries itself and reject stale ones; clients cannot send these two;
 *   <li><b>only end-to-end headers</b> cross: hop-by-hop fields and those named in {@code
 *       Connection} stay on their hop (RFC 9110 §7.6.1), and so do the client's {@code Forwarded}
 *       fields unless {@link Forwarding} trusts it;
 *   <li><b>the target as the client wrote it</b>, under the upstream's base path;
 *   <li><b>a body only if the client sent one</b>.
 * </ul>
 */
final class UpstreamFields {

  static final String SCOPE_HEADER = "Once-Scope";
  static final String TOKEN_HEADER = "Once-Token";

  /**
   * Room beside the header limit for what a hop adds (the Host, the scope and token, a replay
   * marker).
   */
  static final int HEADER_SLACK = 1024;

  /**
   * Request fields never copied upstream, in any case: the client's own framing, the fields only
   * the gateway may set, and those {@link Forwarding} writes.
   */
  private static final Set<String> NOT_FORWARDED = notForwarded();

  private static Set<String> notForwarded() {
    Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    names.addAll(List.of("host", "content-length", "expect", SCOPE_HEADER, TOKEN_HEADER));
    names.addAll(Forwarding.FIELDS);
    return Collections.unmodifiableSet(names);
  }

  private UpstreamFields() {}

  /**
   * The target the upstream gets: its base path, then the path and query as the client wrote them,
   * so a character the client's server accepted is never refused on the way (a '|' or a '{' in a
   * query), which would fail the request as "not sent" on every retry.
   */
  static String target(String basePath, ClientHop hop) {
    String query = hop.query();
    return basePath + hop.path() + (query == null ? "" : "?" + query);
  }

  /**
   * Whether the request has a body to send: not if the client declared none (no {@code
   * Content-Length} nor {@code Transfer-Encoding}), so a bodiless GET or DELETE is not given a
   * {@code Content-Length: 0} (HTTP/1.1: a request without either has no body, RFC 9112 §6.3).
   */
  static boolean hasBody(ProxyExchange exchange) {
    return exchange.headers.first("Content-Length").isPresent()
        || exchange.headers.first("Transfer-Encoding").isPresent();
  }

  /**
   * Writes the fields of {@code exchange}'s request as they go upstream (all but {@code Host},
   * which is the upstream's own, and the body's framing, which is the client's hop's), each name
   * and value to {@code out} in order, straight into the core's own request. Every field the
   * gateway sets itself is one it drops from the client's ({@link #NOT_FORWARDED}), so each is
   * added once and nothing needs replacing.
   */
  static void write(ProxyExchange exchange, Forwarding forwarding, BiConsumer<String, String> out) {
    // The key goes upstream under the route's own header name, in its one canonical spelling.
    String keyHeader = exchange.route.policy().keyHeader();
    for (Headers.Field f : exchange.headers.endToEnd()) {
      // A name with '_' is dropped, as nginx does: CGI-style servers (WSGI, Rack, PHP) read '-' and
      // '_' alike, so Once_Token would reach them as the Once-Token the gateway strips.
      if (!NOT_FORWARDED.contains(f.name())
          && f.name().indexOf('_') < 0
          && !f.name().equalsIgnoreCase(keyHeader)) {
        out.accept(f.name(), f.value());
      }
    }
    exchange.headers.all(keyHeader).forEach(v -> out.accept(keyHeader, canonical(v)));
    Exchange guard = exchange.guard();
    if (guard != null) {
      out.accept(SCOPE_HEADER, guard.scope().value());
      out.accept(TOKEN_HEADER, Long.toString(guard.token()));
    }
    ClientHop hop = exchange.hop;
    forwarding.write(exchange.headers, hop.peer(), hop.peerAddress(), hop.scheme(), out);
  }

  /**
   * The one spelling of a key the upstream sees, whatever the client sent ({@code "K"} or {@code
   * K}): the bare form, unless the key starts with a quote, which only the sf-string form can
   * carry. A value that is no key (on a method the route does not cover) goes on as it came.
   */
  static String canonical(String headerValue) {
    String key;
    try {
      key = IdempotencyKey.parseHeader(headerValue).value();
    } catch (InvalidIdempotencyKeyException e) {
      return headerValue;
    }
    if (key.charAt(0) != '"') {
      return key;
    }
    return '"' + key.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}

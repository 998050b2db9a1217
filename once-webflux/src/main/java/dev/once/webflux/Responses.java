package dev.once.webflux;

import dev.once.http.Headers;
import dev.once.http.StoredResponse;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;

/**
 * Writes responses the filter answers itself (problems, replays) and the ones it held.
 *
 * <p>The module runs on Spring 6 (Boot 3) and Spring 7 (Boot 4) from one build, so it calls only
 * the {@link HttpHeaders} methods both have with the same signature: Spring 7's is no longer a
 * {@code Map} ({@code containsKey}, {@code remove(Object)}, {@code entrySet} are gone), and its
 * replacements are not in Spring 6. {@code getFirst} and {@code headerSet} are in both.
 */
final class Responses {

  private Responses() {}

  /**
   * Sends the response: its status, its headers (see {@link StoredResponse#writeHeaders}), a
   * computed {@code Content-Length}, and the body.
   */
  static Mono<Void> write(ServerHttpResponse response, StoredResponse stored) {
    response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
    HttpHeaders out = response.getHeaders();
    stored.writeHeaders(
        new StoredResponse.HeaderSink() {
          @Override
          public boolean has(String name) {
            return out.getFirst(name) != null;
          }

          @Override
          public void set(String name, String value) {
            out.set(name, value);
          }

          @Override
          public void add(String name, String value) {
            out.add(name, value);
          }
        });
    return writeBody(response, stored.status(), stored.body());
  }

  /** Sends a body of known length; statuses that never carry one get neither body nor length. */
  static Mono<Void> writeBody(ServerHttpResponse response, int status, byte[] body) {
    if (StoredResponse.isBodiless(status)) {
      // Not remove(name): Spring 6's is Map.remove(Object), Spring 7's remove(String).
      response
          .getHeaders()
          .headerSet()
          .removeIf(field -> field.getKey().equalsIgnoreCase(HttpHeaders.CONTENT_LENGTH));
      return response.setComplete();
    }
    response.getHeaders().setContentLength(body.length);
    return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
  }

  /** Spring's header map as once-http's, in Spring's order (by name, then each value). */
  static Headers headersOf(HttpHeaders headers) {
    Headers.Builder b = Headers.builder();
    for (Map.Entry<String, List<String>> field : headers.headerSet()) {
      for (String value : field.getValue()) {
        b.add(field.getKey(), value);
      }
    }
    return b.build();
  }
}

package dev.once.webflux;

import dev.once.http.Headers;
import dev.once.http.StoredResponse;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;

/** Writes responses the filter answers itself (problems, replays) and the ones it held. */
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
            return out.containsKey(name);
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
      response.getHeaders().remove(HttpHeaders.CONTENT_LENGTH);
      return response.setComplete();
    }
    response.getHeaders().setContentLength(body.length);
    return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
  }

  /** Spring's header map as once-http's, in Spring's order (by name, then each value). */
  static Headers headersOf(HttpHeaders headers) {
    Headers.Builder b = Headers.builder();
    for (Map.Entry<String, List<String>> field : headers.entrySet()) {
      for (String value : field.getValue()) {
        b.add(field.getKey(), value);
      }
    }
    return b.build();
  }
}

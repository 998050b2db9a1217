package dev.once.webflux;

import dev.once.http.Headers;
import dev.once.http.StoredResponse;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;

/** Writes responses the filter answers itself (problems, replays) and the ones it held. */
final class Responses {

  private Responses() {}

  /**
   * Sends the response: its status, its headers, a computed {@code Content-Length}, and the body. A
   * field already on the response belongs to this request (an outer filter's request id, CORS
   * headers): the stored values join it and never replace it. The content type is the exception: it
   * describes the stored body.
   */
  static Mono<Void> write(ServerHttpResponse response, StoredResponse stored) {
    response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
    HttpHeaders out = response.getHeaders();
    Set<String> written = new HashSet<>();
    for (Headers.Field f : stored.headers()) {
      String name = f.name().toLowerCase(Locale.ROOT);
      if (name.equals("content-length")) {
        continue;
      }
      boolean first = written.add(name);
      if (first && (name.equals("content-type") || !out.containsKey(f.name()))) {
        out.set(f.name(), f.value());
      } else {
        out.add(f.name(), f.value());
      }
    }
    return writeBody(response, stored.status(), stored.body());
  }

  /** Sends a body of known length; statuses that never carry one get neither body nor length. */
  static Mono<Void> writeBody(ServerHttpResponse response, int status, byte[] body) {
    if (isBodiless(status)) {
      response.getHeaders().remove(HttpHeaders.CONTENT_LENGTH);
      return response.setComplete();
    }
    response.getHeaders().setContentLength(body.length);
    return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
  }

  /** RFC 9110 §6.4.1 and §8.6: 1xx, 204 and 304 have no content and must not declare a length. */
  static boolean isBodiless(int status) {
    return status < 200 || status == 204 || status == 304;
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

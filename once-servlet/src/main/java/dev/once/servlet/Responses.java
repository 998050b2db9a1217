package dev.once.servlet;

import dev.once.http.Headers;
import dev.once.http.StoredResponse;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/** Writes responses the filter answers itself: problems and replays. */
final class Responses {

  private Responses() {}

  /**
   * Sends the response: its status, its headers, a computed {@code Content-Length}, and the body. A
   * field already on the response belongs to this request (an outer filter's request id, CORS
   * headers): the stored values join it and never replace it. The content type is the exception: it
   * describes the stored body.
   */
  static void write(HttpServletResponse response, StoredResponse stored) throws IOException {
    response.setStatus(stored.status());
    Set<String> written = new HashSet<>();
    for (Headers.Field f : stored.headers()) {
      String name = f.name().toLowerCase(Locale.ROOT);
      if (name.equals("content-length")) {
        continue;
      }
      boolean first = written.add(name);
      if (first && (name.equals("content-type") || !response.containsHeader(f.name()))) {
        response.setHeader(f.name(), f.value());
      } else {
        response.addHeader(f.name(), f.value());
      }
    }
    writeBody(response, stored.status(), stored.body());
  }

  /** Sends a body of known length; statuses that never carry one get neither body nor length. */
  static void writeBody(HttpServletResponse response, int status, byte[] body) throws IOException {
    if (isBodiless(status)) {
      return;
    }
    response.setContentLength(body.length);
    if (body.length > 0) {
      response.getOutputStream().write(body);
    }
  }

  /** RFC 9110 §6.4.1 and §8.6: 1xx, 204 and 304 have no content and must not declare a length. */
  static boolean isBodiless(int status) {
    return status < 200 || status == 204 || status == 304;
  }
}

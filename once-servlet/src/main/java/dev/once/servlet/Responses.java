package dev.once.servlet;

import dev.once.http.StoredResponse;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Optional;

/** Writes responses the filter answers itself: problems and replays. */
final class Responses {

  private Responses() {}

  /**
   * Sends the response: its status, its headers (see {@link StoredResponse#writeHeaders}), a
   * computed {@code Content-Length}, and the body.
   */
  static void write(HttpServletResponse response, StoredResponse stored) throws IOException {
    response.setStatus(stored.status());
    stored.writeHeaders(
        new StoredResponse.HeaderSink() {
          @Override
          public boolean has(String name) {
            return response.containsHeader(name);
          }

          @Override
          public void set(String name, String value) {
            response.setHeader(name, value);
          }

          @Override
          public void add(String name, String value) {
            response.addHeader(name, value);
          }
        });
    writeBody(response, stored);
  }

  /**
   * Sends the body with its length; statuses that never carry one get no body, and no length but a
   * 304's own (RFC 9110 §8.6: the length of the representation, kept as the application gave it).
   */
  static void writeBody(HttpServletResponse response, StoredResponse stored) throws IOException {
    int status = stored.status();
    if (StoredResponse.isBodiless(status)) {
      if (status == 304) {
        Optional<String> length = stored.headers().first("Content-Length");
        if (length.isPresent()) {
          response.setHeader("Content-Length", length.get());
        } else {
          // Committed now, the head goes without a length: Jetty 12 completes an uncommitted
          // response with Content-Length: 0, which for a 304 claims an empty representation.
          response.flushBuffer();
        }
      }
      return;
    }
    byte[] body = stored.body();
    response.setContentLength(body.length);
    if (body.length > 0) {
      response.getOutputStream().write(body);
    }
  }
}

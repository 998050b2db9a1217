package dev.once.servlet;

import dev.once.http.StoredResponse;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

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
    writeBody(response, stored.status(), stored.body());
  }

  /** Sends a body of known length; statuses that never carry one get neither body nor length. */
  static void writeBody(HttpServletResponse response, int status, byte[] body) throws IOException {
    if (StoredResponse.isBodiless(status)) {
      return;
    }
    response.setContentLength(body.length);
    if (body.length > 0) {
      response.getOutputStream().write(body);
    }
  }
}

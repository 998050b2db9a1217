package dev.once.http;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A request as the idempotency layer sees it, whatever the framework.
 *
 * @param method the HTTP method, upper case
 * @param path the request path, without the query
 * @param query the raw query string, or empty
 * @param headers the request headers
 * @param body the whole request body (already bounded by the route's {@code maxRequestBytes})
 * @param principal the authenticated principal's name, or {@code null}
 */
public record IncomingRequest(
    String method,
    String path,
    String query,
    Headers headers,
    byte[] body,
    @Nullable String principal) {

  public IncomingRequest {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(path, "path");
    query = query == null ? "" : query;
    Objects.requireNonNull(headers, "headers");
    body = body == null ? new byte[0] : body;
  }

  /** A request with no query and no principal. */
  public static IncomingRequest of(String method, String path, Headers headers, byte[] body) {
    return new IncomingRequest(method, path, "", headers, body, null);
  }

  @Override
  public String toString() {
    return "IncomingRequest[" + method + " " + path + ", " + body.length + " bytes]";
  }
}

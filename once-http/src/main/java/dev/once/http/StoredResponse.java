package dev.once.http;

import dev.once.ResultCodec;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * A response as recorded and replayed: status, the end-to-end headers worth replaying, and the
 * body.
 *
 * @param status the HTTP status code, 100-599
 * @param headers the headers
 * @param body the body bytes
 */
public record StoredResponse(int status, Headers headers, byte[] body) {

  /** Stores responses in a compact, versioned binary form. */
  public static final ResultCodec<StoredResponse> CODEC = new StoredResponseCodec();

  public StoredResponse {
    if (!isStatus(status)) {
      throw new IllegalArgumentException("status must be 100-599, was " + status);
    }
    Objects.requireNonNull(headers, "headers");
    body = body == null ? new byte[0] : body;
  }

  /** Whether this is a status an HTTP response can have. */
  static boolean isStatus(int status) {
    return status >= 100 && status <= 599;
  }

  /** RFC 9110 §6.4.1 and §8.6: 1xx, 204 and 304 have no content and must not declare a length. */
  public static boolean isBodiless(int status) {
    return status < 200 || status == 204 || status == 304;
  }

  /** A framework's response, as {@link #writeHeaders} writes onto it. */
  public interface HeaderSink {
    /** Whether the response already has a field of this name (case-insensitive). */
    boolean has(String name);

    /** Sets the field, replacing any value it has. */
    void set(String name, String value);

    /** Adds a value to the field. */
    void add(String name, String value);
  }

  /**
   * Writes the stored headers onto a response the filter answers itself (a replay, a problem). A
   * field already on the response belongs to this request (an outer filter's request id, CORS
   * headers): the stored values join it and never replace it. The content type is the exception: it
   * describes the stored body. {@code Content-Length} is left to the sender, who knows the body it
   * sends.
   */
  public void writeHeaders(HeaderSink response) {
    Set<String> written = new HashSet<>();
    for (Headers.Field f : headers) {
      String name = f.name().toLowerCase(Locale.ROOT);
      if (name.equals("content-length")) {
        continue;
      }
      boolean first = written.add(name);
      if (first && (name.equals("content-type") || !response.has(f.name()))) {
        response.set(f.name(), f.value());
      } else {
        response.add(f.name(), f.value());
      }
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoredResponse r
        && status == r.status
        && headers.equals(r.headers)
        && Arrays.equals(body, r.body);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * status + headers.hashCode()) + Arrays.hashCode(body);
  }

  @Override
  public String toString() {
    // Never the body: it may hold personal data.
    return "StoredResponse[" + status + ", " + headers + ", " + body.length + " bytes]";
  }
}

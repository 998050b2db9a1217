package dev.once.http;

import dev.once.ResultCodec;
import java.util.Arrays;
import java.util.Objects;

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

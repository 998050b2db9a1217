package dev.once.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.InputStream;
import org.jspecify.annotations.Nullable;

/** Reads a request body that must be fingerprinted, never more than one byte past its limit. */
final class RequestBody {

  private RequestBody() {}

  /**
   * The whole body, or {@code null} if it is larger than {@code max} bytes: refused up front when
   * {@code Content-Length} says so, else after reading at most {@code max + 1} bytes of it.
   */
  static byte @Nullable [] read(HttpServletRequest request, int max) throws IOException {
    long declared = request.getContentLengthLong();
    if (declared > max) {
      return null;
    }
    int limit = max == Integer.MAX_VALUE ? max : max + 1;
    InputStream in = request.getInputStream();
    // With a declared length the container delivers exactly that many bytes, or fails on early EOF.
    byte[] body = in.readNBytes(declared >= 0 ? (int) declared : limit);
    return body.length > max ? null : body;
  }
}

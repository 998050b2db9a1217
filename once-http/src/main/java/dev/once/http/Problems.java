package dev.once.http;

import dev.once.protocol.WireProtocol;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** Renders {@link ProblemType}s as RFC 9457 responses. */
public final class Problems {

  /** The media type of every problem body. */
  public static final String MEDIA_TYPE = WireProtocol.PROBLEM_MEDIA_TYPE;

  private Problems() {}

  /** The problem response, with {@code detail} (never user data that could hold secrets). */
  public static StoredResponse render(ProblemType type, @Nullable String detail) {
    return render(type, detail, null);
  }

  /** The problem response with a {@code Retry-After} header in whole seconds. */
  public static StoredResponse render(
      ProblemType type, @Nullable String detail, @Nullable Duration retryAfter) {
    StringBuilder json = new StringBuilder(256);
    json.append("{\"type\":");
    quote(json, type.uri());
    json.append(",\"title\":");
    quote(json, type.title());
    json.append(",\"status\":").append(type.status());
    if (detail != null) {
      json.append(",\"detail\":");
      quote(json, detail);
    }
    Headers.Builder headers = Headers.builder().add("Content-Type", MEDIA_TYPE);
    if (retryAfter != null) {
      long seconds = Math.max(1, (retryAfter.toMillis() + 999) / 1000);
      json.append(",\"retry_after\":").append(seconds);
      headers.add(WireProtocol.RETRY_AFTER_HEADER, Long.toString(seconds));
    }
    json.append('}');
    return new StoredResponse(
        type.status(), headers.build(), json.toString().getBytes(StandardCharsets.UTF_8));
  }

  /** The 413 answer to a request body over {@code maxRequestBytes}. */
  public static StoredResponse bodyTooLarge(int maxRequestBytes) {
    return render(
        ProblemType.BODY_TOO_LARGE,
        "The request body is larger than " + maxRequestBytes + " bytes.");
  }

  /**
   * A plain RFC 9457 problem for a status, with {@code type} {@code about:blank} and the status's
   * reason phrase as {@code title}: what a framework adapter answers when the handler only names an
   * error status (a servlet's {@code sendError}), so the first response and its replays are the
   * same bytes instead of a container's error page that is generated after the response was
   * recorded.
   *
   * @param detail the handler's own message meant for the client, or {@code null}
   */
  public static StoredResponse forStatus(int status, @Nullable String detail) {
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("a problem status must be 400-599, was " + status);
    }
    StringBuilder json = new StringBuilder(128);
    json.append("{\"type\":\"about:blank\",\"title\":");
    quote(json, ReasonPhrases.of(status));
    json.append(",\"status\":").append(status);
    if (detail != null && !detail.isEmpty()) {
      json.append(",\"detail\":");
      quote(json, detail);
    }
    json.append('}');
    return new StoredResponse(
        status,
        Headers.of("Content-Type", MEDIA_TYPE),
        json.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static void quote(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || Character.isSurrogate(c) && !validPair(s, i)) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  private static boolean validPair(String s, int i) {
    char c = s.charAt(i);
    if (Character.isHighSurrogate(c)) {
      return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
    }
    return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
  }
}

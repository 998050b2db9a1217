package dev.once.client;

import dev.once.protocol.WireProtocol;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The few RFC 9457 problems of a Once server the client acts on (see {@code docs/http.md}), and a
 * reader for the {@code type} member of a problem body. The URIs come from once-protocol's {@link
 * WireProtocol}, as once-http's {@code ProblemType} do, so server and client cannot drift.
 */
final class ProblemJson {

  /** 409: the first request with the key still runs; retry after {@code Retry-After}. */
  static final String IN_FLIGHT = WireProtocol.PROBLEM_BASE_URI + WireProtocol.IN_FLIGHT;

  /** 422: the key was used with another request; never retried. */
  static final String KEY_REUSED = WireProtocol.PROBLEM_BASE_URI + WireProtocol.KEY_REUSED;

  /** 409: the operation happened but its answer cannot be replayed; never retried. */
  static final String RESPONSE_UNAVAILABLE =
      WireProtocol.PROBLEM_BASE_URI + WireProtocol.RESPONSE_UNAVAILABLE;

  private ProblemJson() {}

  /** Whether the response says its body is {@code application/problem+json}. */
  static boolean isProblem(HttpHeaders headers) {
    return headers
        .firstValue("Content-Type")
        .map(v -> v.toLowerCase(Locale.ROOT).trim().startsWith(WireProtocol.PROBLEM_MEDIA_TYPE))
        .orElse(false);
  }

  /**
   * The top-level {@code "type"} string of a JSON object, or {@code ""} when the body is not an
   * object with one. Lenient and non-recursive: it only has to find one member of a small body.
   */
  static String type(byte[] body) {
    try {
      return new Reader(new String(body, StandardCharsets.UTF_8)).topLevelType();
    } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
      return "";
    }
  }

  private static final class Reader {
    private final String s;
    private int i;

    Reader(String s) {
      this.s = s;
    }

    String topLevelType() {
      skipSpace();
      expect('{');
      while (true) {
        skipSpace();
        if (s.charAt(i) == '}') {
          return "";
        }
        String name = string();
        skipSpace();
        expect(':');
        skipSpace();
        if (name.equals("type") && s.charAt(i) == '"') {
          return string();
        }
        skipValue();
        skipSpace();
        if (s.charAt(i) != ',') {
          return "";
        }
        i++;
      }
    }

    /** Skips one value of any kind, up to the {@code ,} or {@code }} that follows it. */
    private void skipValue() {
      int depth = 0;
      while (true) {
        char c = s.charAt(i);
        if (depth == 0 && (c == ',' || c == '}')) {
          return;
        }
        if (c == '"') {
          string();
          continue;
        }
        if (c == '{' || c == '[') {
          depth++;
        } else if (c == '}' || c == ']') {
          depth--;
        }
        i++;
      }
    }

    private String string() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (true) {
        char c = s.charAt(i++);
        if (c == '"') {
          return out.toString();
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        char e = s.charAt(i++);
        switch (e) {
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            i += 4;
          }
          default -> out.append(e);
        }
      }
    }

    private void expect(char c) {
      if (s.charAt(i) != c) {
        throw new IllegalArgumentException("expected " + c);
      }
      i++;
    }

    private void skipSpace() {
      while (Character.isWhitespace(s.charAt(i))) {
        i++;
      }
    }
  }
}

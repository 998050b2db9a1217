package dev.once.outbox;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Headers in one text column, a {@code name:value} line each: names are HTTP tokens (no colon) and
 * values have no line breaks ({@link OutboxMessage} checks both), so the form is unambiguous.
 */
final class HeaderLines {

  private HeaderLines() {}

  static @Nullable String encode(Map<String, String> headers) {
    if (headers.isEmpty()) {
      return null;
    }
    StringBuilder out = new StringBuilder();
    headers.forEach((name, value) -> out.append(name).append(':').append(value).append('\n'));
    return out.toString();
  }

  static Map<String, String> decode(String lines) {
    if (lines == null || lines.isEmpty()) {
      return Collections.emptyMap();
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (String line : lines.split("\n")) {
      int colon = line.indexOf(':');
      headers.put(line.substring(0, colon), line.substring(colon + 1));
    }
    return headers;
  }
}

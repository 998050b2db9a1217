package dev.once.servlet;

import java.net.URLDecoder;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Parses {@code application/x-www-form-urlencoded} bodies the way containers do for {@code
 * getParameter}.
 */
final class FormParameters {

  private static final String FORM = "application/x-www-form-urlencoded";

  private FormParameters() {}

  /**
   * The query's parameters followed by the form body's (the Servlet specification's order), or the
   * query's alone when the body is not a form.
   */
  static Map<String, String[]> merge(
      Map<String, String[]> query, String contentType, String encoding, byte[] body) {
    if (!isForm(contentType) || body.length == 0) {
      return query;
    }
    Map<String, List<String>> all = new LinkedHashMap<>();
    query.forEach(
        (name, values) ->
            all.computeIfAbsent(name, n -> new ArrayList<>()).addAll(List.of(values)));
    Charset charset = charset(encoding);
    for (String pair : new String(body, StandardCharsets.ISO_8859_1).split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq), charset);
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1), charset);
      all.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
    }
    Map<String, String[]> merged = new LinkedHashMap<>();
    all.forEach((name, values) -> merged.put(name, values.toArray(String[]::new)));
    return Collections.unmodifiableMap(merged);
  }

  private static boolean isForm(String contentType) {
    if (contentType == null) {
      return false;
    }
    int semi = contentType.indexOf(';');
    return (semi < 0 ? contentType : contentType.substring(0, semi))
        .trim()
        .toLowerCase(Locale.ROOT)
        .equals(FORM);
  }

  private static Charset charset(String encoding) {
    try {
      return encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
    } catch (IllegalArgumentException e) {
      return StandardCharsets.UTF_8;
    }
  }

  /** Percent-decoding over bytes that arrived as ISO-8859-1, re-read in the form's charset. */
  private static String decode(String s, Charset charset) {
    String bytes;
    try {
      bytes = URLDecoder.decode(s, StandardCharsets.ISO_8859_1);
    } catch (IllegalArgumentException malformedEscape) {
      bytes = s; // containers keep a malformed escape as it was rather than failing the request
    }
    return new String(bytes.getBytes(StandardCharsets.ISO_8859_1), charset);
  }
}

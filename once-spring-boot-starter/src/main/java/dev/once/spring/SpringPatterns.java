package dev.once.spring;

import java.util.Comparator;

/**
 * Turns Spring MVC path patterns into once-http route patterns, and orders routes most specific
 * first.
 */
final class SpringPatterns {

  /**
   * Routes whose segments are more literal come first, as Spring picks the most specific mapping.
   */
  static final Comparator<String> MOST_SPECIFIC_FIRST = SpringPatterns::compareSpecificity;

  private SpringPatterns() {}

  /**
   * {@code /payments/{id}} and {@code /payments/{id:\d+}} become {@code /payments/{id}}; a {@code
   * **} or {@code {*rest}} ends the pattern as {@code **}; a segment that mixes literal text with a
   * wildcard ({@code {name}.json}) becomes {@code *}, which matches a little more than Spring
   * would, but only on paths under the same literal prefix.
   */
  static String toRoutePattern(String springPattern) {
    String path = springPattern.startsWith("/") ? springPattern : "/" + springPattern;
    if (path.equals("/")) {
      return path;
    }
    StringBuilder out = new StringBuilder();
    for (String segment : path.substring(1).split("/", -1)) {
      if (segment.equals("**") || segment.startsWith("{*")) {
        return out.append("/**").toString();
      }
      out.append('/');
      if (isVariable(segment)) {
        int colon = segment.indexOf(':');
        out.append('{').append(segment, 1, colon < 0 ? segment.length() - 1 : colon).append('}');
      } else if (segment.indexOf('*') >= 0
          || segment.indexOf('?') >= 0
          || segment.indexOf('{') >= 0) {
        out.append('*');
      } else {
        out.append(segment);
      }
    }
    return out.toString();
  }

  private static boolean isVariable(String segment) {
    return segment.startsWith("{") && segment.endsWith("}") && segment.indexOf('{', 1) < 0;
  }

  private static int compareSpecificity(String a, String b) {
    String[] x = a.split("/");
    String[] y = b.split("/");
    for (int i = 0; i < Math.min(x.length, y.length); i++) {
      int c = Integer.compare(rank(x[i]), rank(y[i]));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(y.length, x.length);
  }

  private static int rank(String segment) {
    if (segment.equals("**")) {
      return 2;
    }
    return segment.equals("*") || segment.startsWith("{") ? 1 : 0;
  }
}

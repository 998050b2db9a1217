package dev.once.fingerprint;

import java.util.ArrayList;
import java.util.List;

/**
 * An RFC 6901 JSON pointer, split into its unescaped reference tokens: {@code ""} is the whole
 * document, {@code "/a~1b/0"} is the first element of the member named {@code a/b}.
 */
record JsonPointer(String text, List<String> tokens) {

  /**
   * Parses a pointer, rejecting with {@link IllegalArgumentException} anything RFC 6901 does not
   * allow, and lone surrogates, which no I-JSON member name can contain.
   */
  static JsonPointer parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("JSON pointer must not be null");
    }
    if (!text.isEmpty() && text.charAt(0) != '/') {
      throw bad(text, "it must be empty or start with '/'");
    }
    List<String> tokens = new ArrayList<>();
    StringBuilder token = new StringBuilder();
    for (int i = 1; i <= text.length(); i++) {
      char c = i < text.length() ? text.charAt(i) : '/';
      if (c == '/') {
        tokens.add(token.toString());
        token.setLength(0);
      } else if (c == '~') {
        token.append(unescape(text, ++i));
      } else {
        checkNotLoneSurrogate(text, i);
        token.append(c);
      }
    }
    return new JsonPointer(text, List.copyOf(text.isEmpty() ? List.of() : tokens));
  }

  private static char unescape(String text, int i) {
    char next = i < text.length() ? text.charAt(i) : 0;
    if (next == '0') {
      return '~';
    }
    if (next == '1') {
      return '/';
    }
    throw bad(text, "'~' at index " + (i - 1) + " must be followed by '0' or '1'");
  }

  private static void checkNotLoneSurrogate(String text, int i) {
    char c = text.charAt(i);
    boolean paired =
        Character.isHighSurrogate(c)
            ? i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))
            : !Character.isLowSurrogate(c)
                || (i > 0 && Character.isHighSurrogate(text.charAt(i - 1)));
    if (!paired) {
      throw bad(text, "it has a lone surrogate at index " + i);
    }
  }

  private static IllegalArgumentException bad(String text, String why) {
    return new IllegalArgumentException("invalid JSON pointer '" + text + "': " + why);
  }
}

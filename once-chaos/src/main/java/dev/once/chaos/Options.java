package dev.once.chaos;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The harnesses' command lines: {@code --name value} pairs over a table of defaults. An unknown
 * option, a missing value or a value out of range is an {@link IllegalArgumentException} naming it.
 */
final class Options {

  private final Map<String, String> values;

  private Options(Map<String, String> values) {
    this.values = values;
  }

  static Options parse(String[] args, Map<String, String> defaults) {
    Map<String, String> values = new HashMap<>(defaults);
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--") || !defaults.containsKey(arg.substring(2))) {
        throw new IllegalArgumentException(
            "unknown option "
                + arg
                + "; options: --"
                + String.join(", --", defaults.keySet().stream().sorted().toList()));
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(arg + " needs a value");
      }
      values.put(arg.substring(2), args[++i]);
    }
    return new Options(values);
  }

  String get(String name) {
    String v = values.get(name);
    if (v == null) {
      throw new IllegalArgumentException("no option --" + name);
    }
    return v;
  }

  int intValue(String name, int min, int max) {
    String v = get(name);
    try {
      int n = Integer.parseInt(v);
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "--" + name + " must be a number between " + min + " and " + max + ", was " + v);
  }

  /** An enum constant by its name in lower case with dashes, e.g. {@code sync-remote-apply}. */
  <E extends Enum<E>> E enumValue(String name, Class<E> type) {
    String v = get(name);
    for (E e : type.getEnumConstants()) {
      if (spelling(e).equals(v)) {
        return e;
      }
    }
    throw new IllegalArgumentException(
        "--" + name + " must be one of " + spellings(type) + ", was " + v);
  }

  /** As {@link #enumValue}, or every constant for {@code all}. */
  <E extends Enum<E>> List<E> enumValues(String name, Class<E> type) {
    return "all".equals(get(name))
        ? List.of(type.getEnumConstants())
        : List.of(enumValue(name, type));
  }

  private static String spelling(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  private static List<String> spellings(Class<? extends Enum<?>> type) {
    return Arrays.stream(type.getEnumConstants()).map(Options::spelling).toList();
  }
}

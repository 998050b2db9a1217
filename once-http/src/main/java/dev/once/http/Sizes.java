package dev.once.http;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses byte sizes: a plain number of bytes, or a number with {@code KiB}, {@code MiB} or {@code
 * GiB}.
 */
public final class Sizes {

  private static final Pattern SIZE = Pattern.compile("(\\d{1,12})\\s*(b|kib|mib|gib)?");

  private Sizes() {}

  /** The size in bytes, at most {@link Integer#MAX_VALUE}. */
  public static int parse(String text) {
    Matcher m = SIZE.matcher(text.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a size (write 1048576, 512KiB or 4MiB)");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "b" : m.group(2);
    long bytes =
        switch (unit) {
          case "kib" -> n << 10;
          case "mib" -> n << 20;
          case "gib" -> n << 30;
          default -> n;
        };
    if (bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("'" + text + "' is larger than 2GiB");
    }
    return (int) bytes;
  }

  /** The shortest exact spelling, for help text. */
  public static String format(int bytes) {
    if (bytes > 0 && bytes % (1 << 20) == 0) {
      return (bytes >> 20) + "MiB";
    } else if (bytes > 0 && bytes % (1 << 10) == 0) {
      return (bytes >> 10) + "KiB";
    }
    return Integer.toString(bytes);
  }
}

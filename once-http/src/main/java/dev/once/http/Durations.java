package dev.once.http;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses the durations people write in configuration: {@code 500ms}, {@code 30s}, {@code 5m},
 * {@code 24h}, {@code 7d}.
 */
public final class Durations {

  private static final Pattern SHORT = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");

  private Durations() {}

  /** The duration, or an {@link IllegalArgumentException} that shows the accepted forms. */
  public static Duration parse(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    Matcher m = SHORT.matcher(s);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    if (s.startsWith("p")) {
      try {
        return Duration.parse(text.trim());
      } catch (DateTimeParseException e) {
        // fall through to the message below
      }
    }
    throw new IllegalArgumentException(
        "'" + text + "' is not a duration (write 500ms, 30s, 5m, 24h, 7d or ISO-8601 PT30S)");
  }

  /** The shortest of the accepted forms that spells {@code d} exactly, for help text and logs. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms % 86_400_000 == 0 && ms > 0) {
      return ms / 86_400_000 + "d";
    } else if (ms % 3_600_000 == 0 && ms > 0) {
      return ms / 3_600_000 + "h";
    } else if (ms % 60_000 == 0 && ms > 0) {
      return ms / 60_000 + "m";
    } else if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}

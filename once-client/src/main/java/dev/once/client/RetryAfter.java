package dev.once.client;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Reads a {@code Retry-After} value (RFC 9110 §10.2.3): either whole seconds or an HTTP-date, in
 * the preferred IMF-fixdate form or the two obsolete ones recipients must still accept (RFC 9110
 * §5.6.7). A date in the past means "now"; anything unreadable means "no hint".
 */
final class RetryAfter {

  /** Longer hints are taken as this; the client's deadline decides whether to wait at all. */
  static final Duration LONGEST = Duration.ofDays(1);

  private static final DateTimeFormatter ASCTIME =
      new DateTimeFormatterBuilder()
          .appendPattern("EEE MMM ")
          .padNext(2)
          .appendValue(ChronoField.DAY_OF_MONTH)
          .appendPattern(" HH:mm:ss uuuu")
          .toFormatter(Locale.US)
          .withZone(ZoneOffset.UTC);

  private RetryAfter() {}

  static Optional<Duration> parse(@Nullable String value, Instant now) {
    if (value == null) {
      return Optional.empty();
    }
    String v = value.trim();
    if (v.isEmpty()) {
      return Optional.empty();
    }
    if (v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      // More than 9 digits is over 30 years: cap instead of overflowing.
      long seconds = v.length() > 9 ? Long.MAX_VALUE : Long.parseLong(v);
      return Optional.of(seconds >= LONGEST.toSeconds() ? LONGEST : Duration.ofSeconds(seconds));
    }
    return date(v, now)
        .map(
            at -> {
              Duration d = Duration.between(now, at);
              return d.isNegative() ? Duration.ZERO : d.compareTo(LONGEST) > 0 ? LONGEST : d;
            });
  }

  private static Optional<Instant> date(String v, Instant now) {
    for (DateTimeFormatter f :
        new DateTimeFormatter[] {DateTimeFormatter.RFC_1123_DATE_TIME, rfc850(now), ASCTIME}) {
      try {
        return Optional.of(ZonedDateTime.parse(v, f).toInstant());
      } catch (DateTimeParseException e) {
        // Try the next form.
      }
    }
    return Optional.empty();
  }

  /**
   * {@code Sunday, 06-Nov-94 08:49:37 GMT}. The two-digit year is read as the one within 50 years
   * ahead of now or, failing that, the latest in the past (RFC 9110 §5.6.7).
   */
  private static DateTimeFormatter rfc850(Instant now) {
    int thisYear = now.atZone(ZoneOffset.UTC).getYear();
    return new DateTimeFormatterBuilder()
        .appendPattern("EEEE, dd-MMM-")
        .appendValueReduced(ChronoField.YEAR, 2, 2, thisYear - 49)
        .appendPattern(" HH:mm:ss 'GMT'")
        .toFormatter(Locale.US)
        .withZone(ZoneOffset.UTC);
  }
}

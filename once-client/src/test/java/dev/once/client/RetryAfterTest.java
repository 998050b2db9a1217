package dev.once.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** {@code Retry-After} per RFC 9110 §10.2.3, with the three date forms of §5.6.7. */
class RetryAfterTest {

  private static final Instant NOW = Instant.parse("1994-11-06T08:49:07Z");

  @Test
  void secondsAreReadAsSeconds() {
    assertThat(RetryAfter.parse("120", NOW)).contains(Duration.ofSeconds(120));
    assertThat(RetryAfter.parse(" 0 ", NOW)).contains(Duration.ZERO);
  }

  @Test
  void hugeSecondsAreCappedRatherThanOverflowing() {
    assertThat(RetryAfter.parse("99999999999999999999999", NOW)).contains(RetryAfter.LONGEST);
    assertThat(RetryAfter.parse("86401", NOW)).contains(RetryAfter.LONGEST);
  }

  @Test
  void anImfFixdateIsTheTimeLeftUntilIt() {
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW))
        .contains(Duration.ofSeconds(30));
  }

  @Test
  void theObsoleteRfc850FormIsAccepted() {
    assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", NOW))
        .contains(Duration.ofSeconds(30));
  }

  @Test
  void aTwoDigitYearMoreThanFiftyYearsAheadIsInThePast() {
    Instant now = Instant.parse("2030-01-01T00:00:00Z");
    // 2094 would be 64 years ahead, so "94" is 1994: already past.
    assertThat(RetryAfter.parse("Sunday, 06-Nov-94 08:49:37 GMT", now)).contains(Duration.ZERO);
    // "31" is 2031.
    assertThat(RetryAfter.parse("Wednesday, 01-Jan-31 00:00:00 GMT", now))
        .contains(Duration.ofDays(1));
  }

  @Test
  void theObsoleteAsctimeFormIsAccepted() {
    assertThat(RetryAfter.parse("Sun Nov  6 08:49:37 1994", NOW)).contains(Duration.ofSeconds(30));
    assertThat(RetryAfter.parse("Wed Nov 16 08:49:37 1994", NOW)).contains(Duration.ofDays(1));
  }

  @Test
  void aDateInThePastMeansNow() {
    assertThat(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", NOW)).contains(Duration.ZERO);
  }

  @Test
  void aDateFarAheadIsCapped() {
    assertThat(RetryAfter.parse("Fri, 01 Jan 2100 00:00:00 GMT", NOW)).contains(RetryAfter.LONGEST);
  }

  @Test
  void anythingElseIsNoHint() {
    for (String v :
        new String[] {
          null,
          "",
          "  ",
          "-1",
          "1.5",
          "soon",
          "Sun, 06 Nov 1994",
          "0x10",
          "Mon, 06 Nov 1994 08:49:37 GMT" /* 6 Nov 1994 was a Sunday */
        }) {
      assertThat(RetryAfter.parse(v, NOW)).as(v).isEmpty();
    }
  }
}

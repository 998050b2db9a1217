package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Route patterns, segment by segment; the odd paths were found by once-fuzz. */
class RouteTest {

  private static Route route(String pattern) {
    return new Route(pattern, RoutePolicy.DEFAULTS);
  }

  @Test
  void literalsWildcardsAndATrailingDoubleStarMatchBySegment() {
    assertThat(route("/p/{id}/refunds").matches("/p/42/refunds")).isTrue();
    assertThat(route("/p/*").matches("/p/42/")).isTrue();
    assertThat(route("/p/*").matches("/p/42/x")).isFalse();
    assertThat(route("/p/**").matches("/p")).isTrue();
    assertThat(route("/p/**").matches("/p/a/b")).isTrue();
    assertThat(route("/").matches("/")).isTrue();
  }

  @Test
  void anEmptyPathMatchesOnlyTheRootAndNeverThrows() {
    assertThat(route("/").matches("")).isTrue();
    assertThat(route("/p/**").matches("")).isFalse();
    assertThat(route("/**").matches("")).isTrue();
  }

  @Test
  void aPathWithoutALeadingSlashKeepsItsFirstCharacter() {
    assertThat(route("/required/**").matches("xrequired/a")).isFalse();
    assertThat(route("/**").matches("*")).isTrue();
  }

  @Test
  void aDoubleStarAnywhereButLastIsRefused() {
    assertThatThrownBy(() -> route("/a/**/b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> route("a")).isInstanceOf(IllegalArgumentException.class);
  }
}

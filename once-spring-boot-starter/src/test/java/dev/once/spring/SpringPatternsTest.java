package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SpringPatternsTest {

  @Test
  void variablesBecomeOneSegmentWildcardsWhateverTheirRegex() {
    assertThat(SpringPatterns.toRoutePattern("/payments/{id}")).isEqualTo("/payments/{id}");
    assertThat(SpringPatterns.toRoutePattern("/payments/{id:\\d+}/refunds"))
        .isEqualTo("/payments/{id}/refunds");
  }

  @Test
  void aCatchAllEndsThePattern() {
    assertThat(SpringPatterns.toRoutePattern("/files/**")).isEqualTo("/files/**");
    assertThat(SpringPatterns.toRoutePattern("/files/{*path}")).isEqualTo("/files/**");
    assertThat(SpringPatterns.toRoutePattern("/a/**/b")).isEqualTo("/a/**");
  }

  @Test
  void aSegmentMixingTextAndWildcardsMatchesTheWholeSegment() {
    assertThat(SpringPatterns.toRoutePattern("/reports/{name}.json")).isEqualTo("/reports/*");
    assertThat(SpringPatterns.toRoutePattern("/reports/*.csv")).isEqualTo("/reports/*");
    assertThat(SpringPatterns.toRoutePattern("/v?/orders")).isEqualTo("/*/orders");
  }

  @Test
  void patternsWithoutALeadingSlashOrWithNoSegmentsAreNormalised() {
    assertThat(SpringPatterns.toRoutePattern("orders")).isEqualTo("/orders");
    assertThat(SpringPatterns.toRoutePattern("/")).isEqualTo("/");
  }

  @Test
  void literalSegmentsComeBeforeWildcardsAndLongerBeforeShorter() {
    List<String> patterns =
        new ArrayList<>(
            List.of(
                "/payments/**",
                "/payments/{id}",
                "/payments/refunds",
                "/payments/{id}/refunds",
                "/{tenant}/payments"));

    patterns.sort(SpringPatterns.MOST_SPECIFIC_FIRST);

    assertThat(patterns)
        .containsExactly(
            "/payments/refunds",
            "/payments/{id}/refunds",
            "/payments/{id}",
            "/payments/**",
            "/{tenant}/payments");
  }
}

package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.FailureMode;
import dev.once.InFlightPolicy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The one table of route options: what each option does to a policy, and how bad values are named.
 */
class RouteOptionsTest {

  @Test
  void everyOptionChangesThePolicyItNames() {
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("methods", List.of("post", "PUT"));
    values.put("key-required", true);
    values.put("key-header", "x-idempotency-key");
    values.put("replay", "success-only");
    values.put("lease", Duration.ofSeconds(5));
    values.put("ttl", Duration.ofHours(1));
    values.put("in-flight", "wait");
    values.put("max-wait", Duration.ofSeconds(3));
    values.put("in-flight-retry-after", Duration.ofSeconds(2));
    values.put("max-waiters-per-key", 7);
    values.put("failure-mode", FailureMode.FAIL_OPEN);
    values.put("store-retry-after", Duration.ofSeconds(9));
    values.put("max-request-bytes", 2048L);
    values.put("max-response-bytes", 4096);
    values.put("excluded-json-pointers", List.of("/sent_at"));
    values.put("replay-header-denylist", "X-Request-Id");
    assertThat(values.keySet())
        .as("this test sets every option")
        .containsExactlyElementsOf(RouteOptions.all().stream().map(RouteOption::name).toList());

    RoutePolicy p = RouteOptions.apply(RoutePolicy.DEFAULTS, values);

    assertThat(p.methods()).containsExactlyInAnyOrder("POST", "PUT");
    assertThat(p.keyRequired()).isTrue();
    assertThat(p.keyHeader()).isEqualTo("x-idempotency-key");
    assertThat(p.classifier()).isEqualTo(HttpOutcomes.SUCCESS_ONLY);
    assertThat(p.inFlightRetryAfter()).isEqualTo(Duration.ofSeconds(2));
    assertThat(p.execution().lease()).isEqualTo(Duration.ofSeconds(5));
    assertThat(p.execution().ttl()).isEqualTo(Duration.ofHours(1));
    assertThat(p.execution().inFlight()).isEqualTo(InFlightPolicy.waitUpTo(Duration.ofSeconds(3)));
    assertThat(p.maxWaitersPerKey()).isEqualTo(7);
    assertThat(p.execution().failureMode()).isEqualTo(FailureMode.FAIL_OPEN);
    assertThat(p.execution().storeRetryAfter()).isEqualTo(Duration.ofSeconds(9));
    assertThat(p.maxRequestBytes()).isEqualTo(2048);
    assertThat(p.execution().maxResultBytes()).isEqualTo(4096);
    assertThat(p.excludedJsonPointers()).containsExactly("/sent_at");
    assertThat(p.replayHeaderDenylist()).containsExactly("x-request-id");
  }

  @Test
  void theShownDefaultsAreTheDefaultPolicy() {
    assertThat(RouteOptions.all())
        .extracting(RouteOption::name, RouteOption::defaultValue)
        .contains(
            org.assertj.core.groups.Tuple.tuple("lease", "30s"),
            org.assertj.core.groups.Tuple.tuple("ttl", "1d"),
            org.assertj.core.groups.Tuple.tuple("in-flight", "reject"),
            org.assertj.core.groups.Tuple.tuple("max-wait", "10s"),
            org.assertj.core.groups.Tuple.tuple("max-request-bytes", "1MiB"),
            org.assertj.core.groups.Tuple.tuple("max-response-bytes", "4MiB"),
            org.assertj.core.groups.Tuple.tuple("failure-mode", "fail-closed"),
            org.assertj.core.groups.Tuple.tuple("key-header", "Idempotency-Key"),
            org.assertj.core.groups.Tuple.tuple("replay", "default"),
            org.assertj.core.groups.Tuple.tuple("in-flight-retry-after", "the remaining lease"));
    assertThat(RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of())).isEqualTo(RoutePolicy.DEFAULTS);
  }

  @Test
  void aWaitBoundSetBeforeTheModeStillCountsAndTheModeAloneWaitsTenSeconds() {
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("max-wait", Duration.ofSeconds(2));
    values.put("in-flight", "wait");

    assertThat(RouteOptions.apply(RoutePolicy.DEFAULTS, values).execution().inFlight())
        .isEqualTo(InFlightPolicy.waitUpTo(Duration.ofSeconds(2)));
    assertThat(
            RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("in-flight", "WAIT"))
                .execution()
                .inFlight())
        .isEqualTo(InFlightPolicy.waitUpTo(Duration.ofSeconds(10)));
    assertThat(
            RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("max-wait", Duration.ofSeconds(2)))
                .execution()
                .inFlight())
        .as("a bound without wait mode changes nothing")
        .isEqualTo(InFlightPolicy.reject());
  }

  @Test
  void aListReplacesTheBaseList() {
    RoutePolicy base = RoutePolicy.builder().excludeJsonPointer("/a").build();

    RoutePolicy p = RouteOptions.apply(base, Map.of("excluded-json-pointers", List.of("/b")));

    assertThat(p.excludedJsonPointers()).containsExactly("/b");
  }

  @Test
  void aRefusedValueNamesItsOptionAndTheReason() {
    assertThatThrownBy(
            () -> RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("lease", Duration.ofDays(2))))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> {
              assertThat(e.option()).isEqualTo("lease");
              assertThat(e.reason()).contains("lease must be between");
            });
    assertThatThrownBy(() -> RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("in-flight", "later")))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> assertThat(e.reason()).contains("reject, wait"));
    assertThatThrownBy(
            () -> RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("max-request-bytes", 3L << 31)))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> assertThat(e.option()).isEqualTo("max-request-bytes"));
    assertThatThrownBy(() -> RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("lease", "30s")))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> assertThat(e.reason()).contains("must be a duration"));
    assertThatThrownBy(() -> RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("max-waiters", 3)))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> assertThat(e.reason()).contains("unknown option"));
  }

  @Test
  void aKeyHeaderMustBeAHeaderNameAndAHintMustFitRetryAfter() {
    assertThatThrownBy(
            () -> RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("key-header", "Idempotency Key")))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> {
              assertThat(e.option()).isEqualTo("key-header");
              assertThat(e.reason()).contains("is not a header name");
            });
    assertThatThrownBy(
            () ->
                RouteOptions.apply(
                    RoutePolicy.DEFAULTS, Map.of("in-flight-retry-after", Duration.ofMillis(500))))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> assertThat(e.reason()).contains("between 1s and 1h"));
    assertThatThrownBy(() -> RouteOptions.apply(RoutePolicy.DEFAULTS, Map.of("replay", "all")))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> assertThat(e.reason()).contains("default, stripe, success-only"));
  }

  @Test
  void contradictoryOptionsAreRefusedWithoutAnOptionName() {
    Map<String, Object> values = Map.of("lease", Duration.ofHours(2), "ttl", Duration.ofHours(1));

    assertThatThrownBy(() -> RouteOptions.apply(RoutePolicy.DEFAULTS, values))
        .isInstanceOfSatisfying(
            InvalidRouteOptionException.class,
            e -> {
              assertThat(e.option()).isEmpty();
              assertThat(e.reason()).contains("ttl");
            });
  }
}

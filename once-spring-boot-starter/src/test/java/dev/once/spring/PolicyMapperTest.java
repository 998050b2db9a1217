package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.once.InFlightPolicy;
import dev.once.http.Durations;
import dev.once.http.RouteOptions;
import dev.once.http.RoutePolicy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

/** How the layers of a route combine, and which property a refusal names. */
class PolicyMapperTest {

  private final OnceProperties.Policy defaults = new OnceProperties.Policy();
  private final OnceProperties.Route route = new OnceProperties.Route();

  private PolicyMapper.Resolved resolve() {
    return PolicyMapper.resolve(
        "once.routes[0]",
        List.of(
            PolicyMapper.Layer.properties("once.defaults", defaults),
            PolicyMapper.Layer.properties("once.routes[0]", route)));
  }

  private InvalidOncePropertyException refusal() {
    return catchThrowableOfType(InvalidOncePropertyException.class, this::resolve);
  }

  @Test
  void nothingSetIsTheCoresDefaults() {
    assertThat(resolve().policy()).isEqualTo(RoutePolicy.DEFAULTS);
  }

  @Test
  void aMaxWaitInTheDefaultsBoundsARouteThatWaits() {
    defaults.setMaxWait(Duration.ofSeconds(3));
    route.setInFlight(InFlightMode.WAIT);

    assertThat(resolve().policy().execution().inFlight())
        .isEqualTo(InFlightPolicy.waitUpTo(Duration.ofSeconds(3)));
  }

  @Test
  void waitingWithoutAMaxWaitTakesTheTablesDefault() {
    route.setInFlight(InFlightMode.WAIT);

    Duration tableDefault = Durations.parse(RouteOptions.named("max-wait").defaultValue());
    assertThat(resolve().policy().execution().inFlight())
        .isEqualTo(InFlightPolicy.waitUpTo(tableDefault));
  }

  @Test
  void aLaterLayerReplacesAValueAndAWholeList() {
    defaults.setLease(Duration.ofSeconds(5));
    defaults.setReplayHeaderDenylist(List.of("X-Trace", "X-Span"));
    route.setLease(Duration.ofSeconds(7));
    route.setReplayHeaderDenylist(List.of("X-Request-Id"));

    RoutePolicy policy = resolve().policy();

    assertThat(policy.execution().lease()).isEqualTo(Duration.ofSeconds(7));
    assertThat(policy.replayHeaderDenylist()).containsExactly("x-request-id");
  }

  @Test
  void sizesAreBytes() {
    route.setMaxResponseBytes(DataSize.ofKilobytes(64));

    assertThat(resolve().policy().execution().maxResultBytes()).isEqualTo(64 * 1024);
  }

  @Test
  void aRefusalNamesTheLayerThatSetTheValue() {
    defaults.setMaxWait(Duration.ofHours(2));
    assertThat(refusal().getProperty()).isEqualTo("once.defaults.max-wait");

    route.setMaxWait(Duration.ofHours(3));
    InvalidOncePropertyException e = refusal();
    assertThat(e.getProperty()).isEqualTo("once.routes[0].max-wait");
    assertThat(e.getMessage()).contains("PT3H");
  }

  @Test
  void aSizeBeyondTwoGibibytesIsNamed() {
    route.setMaxRequestBytes(DataSize.ofGigabytes(3));

    assertThat(refusal().getProperty()).isEqualTo("once.routes[0].max-request-bytes");
  }

  @Test
  void anAnnotationLayerIsNamedByAttributeAndMethod() {
    OnceProperties.Policy handler = new OnceProperties.Policy();
    handler.setStoreRetryAfter(Duration.ZERO);
    PolicyMapper.Layer layer =
        new PolicyMapper.Layer(
            handler, f -> "@Idempotent(" + PolicyMapper.camelCase(f) + ") on C#m");

    InvalidOncePropertyException e =
        catchThrowableOfType(
            InvalidOncePropertyException.class,
            () ->
                PolicyMapper.resolve(
                    "C#m",
                    List.of(PolicyMapper.Layer.properties("once.defaults", defaults), layer)));

    assertThat(e.getProperty()).isEqualTo("@Idempotent(storeRetryAfter) on C#m");
  }

  @Test
  void aTransactionalRouteHasNoHeartbeatAndSaysWhichPropertyAskedForIt() {
    defaults.setTransactional(true);

    PolicyMapper.Resolved resolved = resolve();

    assertThat(resolved.transactional()).isTrue();
    assertThat(resolved.transactionalProperty()).isEqualTo("once.defaults.transactional");
    assertThat(resolved.policy().execution().heartbeat()).isFalse();
  }
}

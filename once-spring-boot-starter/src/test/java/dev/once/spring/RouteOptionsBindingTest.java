package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.FailureMode;
import dev.once.http.RouteOption;
import dev.once.http.RouteOptions;
import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.util.unit.DataSize;

/**
 * {@link PolicyMapper} reads every option of once-http's {@link RouteOptions} table from {@link
 * OnceProperties.Policy} by name, so the properties (and the {@link Idempotent} attributes that
 * fill them) must be the table's: one property per option, of a type Spring binds to what the table
 * accepts, and nothing else but the Spring-only {@code transactional}.
 */
class RouteOptionsBindingTest {

  /** A bean's writable properties under the names Spring binds them to ({@code max-wait}). */
  private static Map<String, PropertyDescriptor> bound(Class<?> type) {
    Map<String, PropertyDescriptor> byName = new TreeMap<>();
    for (PropertyDescriptor d : BeanUtils.getPropertyDescriptors(type)) {
      if (d.getWriteMethod() != null) {
        byName.put(DataObjectPropertyName.toDashedForm(d.getName()), d);
      }
    }
    return byName;
  }

  @Test
  void everyOptionHasAPolicyPropertyOfACompatibleType() {
    Map<String, PropertyDescriptor> properties = bound(OnceProperties.Policy.class);
    SoftAssertions softly = new SoftAssertions();
    for (RouteOption option : RouteOptions.all()) {
      PropertyDescriptor property = properties.get(option.name());
      softly
          .assertThat(property)
          .as("OnceProperties.Policy has no property for the option %s", option)
          .isNotNull();
      if (property == null) {
        continue;
      }
      softly
          .assertThat(PolicyMapper.propertyName(option))
          .as("the property PolicyMapper reads for %s", option)
          .isEqualTo(property.getName());
      ResolvableType type = ResolvableType.forMethodReturnType(property.getReadMethod());
      softly
          .assertThat(compatible(option, type))
          .as(
              "OnceProperties.Policy.%s is a %s, which does not suit a %s option%s",
              property.getName(),
              type,
              option.type(),
              option.choices().isEmpty() ? "" : " " + option.choices())
          .isTrue();
    }
    softly.assertAll();
  }

  /** Boxed types only: null is how a layer says "not set here, inherit". */
  private static boolean compatible(RouteOption option, ResolvableType type) {
    Class<?> raw = type.toClass();
    return switch (option.type()) {
      case DURATION -> raw == Duration.class;
      case BYTES -> raw == DataSize.class;
      case COUNT -> raw == Integer.class;
      case BOOLEAN -> raw == Boolean.class;
      case LIST -> raw == List.class && type.getGeneric(0).toClass() == String.class;
      case CHOICE -> raw.isEnum() && choices(raw).equals(Set.copyOf(option.choices()));
      case TEXT -> raw == String.class;
    };
  }

  /** An enum's constants as the table spells choices: {@code FAIL_OPEN} is {@code fail-open}. */
  private static Set<String> choices(Class<?> enumType) {
    return Arrays.stream(enumType.getEnumConstants())
        .map(c -> ((Enum<?>) c).name().toLowerCase(Locale.ROOT).replace('_', '-'))
        .collect(Collectors.toSet());
  }

  @Test
  void policyHasNoRoutePropertyBeyondTheTable() {
    Set<String> beyond = new TreeSet<>(bound(OnceProperties.Policy.class).keySet());
    RouteOptions.all().forEach(o -> beyond.remove(o.name()));
    assertThat(beyond)
        .as("OnceProperties.Policy properties that are not route options")
        .containsExactly("transactional");

    Set<String> routeOnly = new TreeSet<>(bound(OnceProperties.Route.class).keySet());
    routeOnly.removeAll(bound(OnceProperties.Policy.class).keySet());
    assertThat(routeOnly)
        .as("OnceProperties.Route properties beyond the policy")
        .containsExactly("pattern");
  }

  @Test
  void idempotentHasOneAttributePerPolicyProperty() {
    Set<String> attributes =
        Arrays.stream(Idempotent.class.getDeclaredMethods())
            .map(Method::getName)
            .filter(name -> !MethodPlan.CALL_ATTRIBUTES.contains(name))
            .collect(Collectors.toCollection(TreeSet::new));
    Set<String> properties =
        bound(OnceProperties.Policy.class).values().stream()
            .map(PropertyDescriptor::getName)
            .collect(Collectors.toCollection(TreeSet::new));

    assertThat(attributes).isEqualTo(properties);
  }

  @Test
  void everyCallAttributeIsAnAttribute() {
    Set<String> attributes =
        Arrays.stream(Idempotent.class.getDeclaredMethods())
            .map(Method::getName)
            .collect(Collectors.toSet());

    assertThat(attributes).containsAll(MethodPlan.CALL_ATTRIBUTES);
  }

  @Idempotent(
      methods = "PUT",
      keyRequired = true,
      keyHeader = "X-Idempotency-Key",
      replay = dev.once.http.HttpOutcomes.STRIPE,
      lease = "1m",
      ttl = "2h",
      inFlight = InFlightMode.WAIT,
      maxWait = "5s",
      inFlightRetryAfter = "2s",
      maxWaitersPerKey = 3,
      failureMode = FailureMode.FAIL_OPEN,
      storeRetryAfter = "2s",
      maxRequestBytes = "2KB",
      maxResponseBytes = "8KB",
      excludedJsonPointers = "/sent_at",
      replayHeaderDenylist = "X-Request-Id",
      transactional = true)
  void everything() {}

  @Test
  void everyAttributeReachesItsProperty() throws Exception {
    Idempotent all = getClass().getDeclaredMethod("everything").getAnnotation(Idempotent.class);

    OnceProperties.Policy policy =
        IdempotentAttributes.policyOf(all, a -> a, new StandardEnvironment(), Set.of("PUT"));

    BeanWrapper read = PropertyAccessorFactory.forBeanPropertyAccess(policy);
    Set<String> unset =
        bound(OnceProperties.Policy.class).values().stream()
            .map(PropertyDescriptor::getName)
            .filter(p -> read.getPropertyValue(p) == null)
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(unset)
        .as("properties IdempotentAttributes.policyOf leaves unset when every attribute is given")
        .isEmpty();
  }
}

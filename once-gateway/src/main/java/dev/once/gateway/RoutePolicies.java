package dev.once.gateway;

import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.InFlightPolicy;
import dev.once.http.RoutePolicy;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Maps one YAML route (or the {@code defaults} section) onto {@link RoutePolicy.Builder} and
 * {@link ExecutionPolicy.Builder}: the builders do the validating, this only translates names.
 */
final class RoutePolicies {

  /** Every key a route may have; {@code pattern} only outside {@code defaults}. */
  static final Set<String> KEYS = Set.of("pattern", "methods", "key-required", "lease", "ttl", "in-flight",
      "max-wait", "max-waiters", "failure-mode", "max-request-bytes", "max-response-bytes",
      "excluded-json-pointers", "replay-header-denylist");

  private RoutePolicies() {}

  /**
   * The policy {@code yaml} describes on top of {@code base}; errors name {@code where} and the key.
   */
  static RoutePolicy parse(Map<String, Object> yaml, RoutePolicy base, String where) {
    for (String key : yaml.keySet()) {
      if (!KEYS.contains(key)) {
        throw new ConfigException(where + ": unknown key '" + key + "'; known keys: " + String.join(", ", new java.util.TreeSet<>(KEYS)));
      }
    }
    RoutePolicy.Builder route = base.toBuilder();
    ExecutionPolicy.Builder execution = base.execution().toBuilder();
    String key = null;
    try {
      key = "methods";
      if (yaml.containsKey(key)) {
        route.methods(strings(yaml.get(key)).toArray(String[]::new));
      }
      key = "key-required";
      if (yaml.containsKey(key)) {
        route.keyRequired(Options.bool(key, text(yaml.get(key))));
      }
      key = "lease";
      if (yaml.containsKey(key)) {
        execution.lease(Durations.parse(text(yaml.get(key))));
      }
      key = "ttl";
      if (yaml.containsKey(key)) {
        execution.ttl(Durations.parse(text(yaml.get(key))));
      }
      key = "in-flight";
      String inFlight = yaml.containsKey(key) ? text(yaml.get(key)).toLowerCase(Locale.ROOT)
          : base.execution().inFlight() instanceof InFlightPolicy.Wait ? "wait" : "reject";
      key = "max-wait";
      Duration maxWait = yaml.containsKey(key) ? Durations.parse(text(yaml.get(key)))
          : base.execution().inFlight() instanceof InFlightPolicy.Wait w ? w.maxWait() : Duration.ofSeconds(10);
      key = "in-flight";
      execution.inFlight(switch (inFlight) {
        case "reject" -> InFlightPolicy.reject();
        case "wait" -> InFlightPolicy.waitUpTo(maxWait);
        default -> throw new IllegalArgumentException("must be reject or wait, was '" + inFlight + "'");
      });
      key = "max-waiters";
      if (yaml.containsKey(key)) {
        route.maxWaitersPerKey(Options.integer(key, text(yaml.get(key))));
      }
      key = "failure-mode";
      if (yaml.containsKey(key)) {
        String mode = text(yaml.get(key)).toLowerCase(Locale.ROOT);
        execution.failureMode(switch (mode) {
          case "fail-closed", "closed" -> FailureMode.FAIL_CLOSED;
          case "fail-open", "open" -> FailureMode.FAIL_OPEN;
          default -> throw new IllegalArgumentException("must be fail-closed or fail-open, was '" + mode + "'");
        });
      }
      key = "max-request-bytes";
      if (yaml.containsKey(key)) {
        route.maxRequestBytes(Sizes.parse(text(yaml.get(key))));
      }
      key = "max-response-bytes";
      if (yaml.containsKey(key)) {
        execution.maxResultBytes(Sizes.parse(text(yaml.get(key))));
      }
      key = "excluded-json-pointers";
      if (yaml.containsKey(key)) {
        strings(yaml.get(key)).forEach(route::excludeJsonPointer);
      }
      key = "replay-header-denylist";
      if (yaml.containsKey(key)) {
        strings(yaml.get(key)).forEach(route::denyReplayHeader);
      }
      key = "lease/ttl";
      return route.execution(execution.build()).build();
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new ConfigException(where + "." + key + ": " + e.getMessage());
    }
  }

  private static String text(Object value) {
    if (value == null || value instanceof Map || value instanceof List) {
      throw new IllegalArgumentException("must be a single value");
    }
    return String.valueOf(value);
  }

  private static List<String> strings(Object value) {
    if (value instanceof List<?> list) {
      return list.stream().map(RoutePolicies::text).toList();
    }
    return List.of(text(value));
  }
}

package dev.once.gateway;

import dev.once.http.Durations;
import dev.once.http.InvalidRouteOptionException;
import dev.once.http.RouteOption;
import dev.once.http.RouteOptions;
import dev.once.http.RoutePolicy;
import dev.once.http.Sizes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns the YAML of a route (or of the {@code defaults} section) into option values of the types
 * {@link RouteOptions} declares; the names, the defaults and the validation all live there.
 */
final class RoutePolicies {

  private RoutePolicies() {}

  /**
   * The options {@code yaml} sets, parsed; errors name {@code where} and the key. {@code pattern}
   * is the route's, not an option, and is skipped.
   */
  static Map<String, Object> options(Map<String, Object> yaml, String where) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : yaml.entrySet()) {
      if (e.getKey().equals("pattern")) {
        continue;
      }
      RouteOption option = RouteOptions.named(e.getKey());
      if (option == null) {
        throw new ConfigException(
            where
                + ": unknown key '"
                + e.getKey()
                + "'; known keys: pattern, "
                + String.join(", ", RouteOptions.all().stream().map(RouteOption::name).toList()));
      }
      try {
        values.put(option.name(), parse(option, e.getValue()));
      } catch (IllegalArgumentException ex) {
        throw new ConfigException(where + "." + option.name() + ": " + ex.getMessage());
      }
    }
    return values;
  }

  /** The policy of {@code values} (the defaults' options, then the route's over them). */
  static RoutePolicy policy(Map<String, Object> values, String where) {
    try {
      return RouteOptions.apply(RoutePolicy.DEFAULTS, values);
    } catch (InvalidRouteOptionException e) {
      throw new ConfigException(
          where + (e.option().isEmpty() ? "" : "." + e.option()) + ": " + e.reason());
    }
  }

  private static Object parse(RouteOption option, Object value) {
    return switch (option.type()) {
      case DURATION -> Durations.parse(text(value));
      case BYTES -> Sizes.parse(text(value));
      case COUNT -> Options.integer(option.name(), text(value));
      case BOOLEAN -> Options.bool(option.name(), text(value));
      case CHOICE, TEXT -> text(value);
      case LIST ->
          value instanceof List<?> list
              ? list.stream().map(RoutePolicies::text).toList()
              : List.of(text(value));
    };
  }

  private static String text(Object value) {
    if (value == null || value instanceof Map || value instanceof List) {
      throw new IllegalArgumentException("must be a single value");
    }
    return String.valueOf(value);
  }
}

package dev.once.spring;

import dev.once.http.InvalidRouteOptionException;
import dev.once.http.RouteOption;
import dev.once.http.RouteOptions;
import dev.once.http.RoutePolicy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.util.unit.DataSize;

/**
 * Maps layers of settings (the defaults, then a route's or a handler's own) onto once-http's {@link
 * RouteOptions} table: every option is read from {@link OnceProperties.Policy} under its own name,
 * the layers are merged, and the table builds the policy, validating each value. Nothing here lists
 * the options or knows a default, so an option added to the table needs only its property ({@code
 * RouteOptionsBindingTest} says which); a refusal is reported under the property that carried the
 * value.
 */
final class PolicyMapper {

  private PolicyMapper() {}

  /**
   * One source of settings.
   *
   * @param values the settings; unset ones are null
   * @param namer turns a property's kebab-case name into the name users wrote it under
   */
  record Layer(OnceProperties.Policy values, UnaryOperator<String> namer) {
    static Layer properties(String prefix, OnceProperties.Policy values) {
      return new Layer(values, field -> prefix + "." + field);
    }

    String name(String field) {
      return namer.apply(field);
    }
  }

  /** A route's policy, and whether it runs in a transaction (with the property that said so). */
  record Resolved(
      RoutePolicy policy, boolean transactional, @Nullable String transactionalProperty) {}

  /** An option's value as Spring bound it, and the property (or attribute) it was written under. */
  private record Setting(String property, Object value) {}

  /**
   * Merges the layers (a later layer's value replaces an earlier one, a list the whole list) and
   * applies the result once on the core's defaults, so that options from different layers combine:
   * a {@code max-wait} in the defaults still bounds a route that turns {@code in-flight: wait} on.
   */
  static Resolved resolve(String routeName, List<Layer> layers) {
    Map<String, Setting> settings = new LinkedHashMap<>();
    boolean transactional = false;
    String transactionalName = null;
    for (Layer layer : layers) {
      BeanWrapper values = PropertyAccessorFactory.forBeanPropertyAccess(layer.values());
      for (RouteOption option : RouteOptions.all()) {
        Object value = values.getPropertyValue(propertyName(option));
        if (value != null) {
          settings.put(option.name(), new Setting(layer.name(option.name()), value));
        }
      }
      if (layer.values().getTransactional() != null) {
        transactional = layer.values().getTransactional();
        transactionalName = layer.name("transactional");
      }
    }
    RoutePolicy policy = apply(routeName, settings);
    if (transactional) {
      // The record is invisible to others until commit: a heartbeat from another thread would wait
      // on it.
      policy =
          policy.toBuilder()
              .execution(policy.execution().toBuilder().heartbeat(false).build())
              .build();
    }
    return new Resolved(policy, transactional, transactionalName);
  }

  private static RoutePolicy apply(String routeName, Map<String, Setting> settings) {
    Map<String, Object> values = new LinkedHashMap<>();
    settings.forEach((option, setting) -> values.put(option, optionValue(setting.value())));
    try {
      return RouteOptions.apply(RoutePolicy.DEFAULTS, values);
    } catch (InvalidRouteOptionException e) {
      Setting refused = settings.get(e.option());
      if (refused == null) {
        // No single option is wrong (a ttl shorter than the lease): the route as a whole is.
        throw new InvalidOncePropertyException(routeName, null, e.reason());
      }
      throw new InvalidOncePropertyException(refused.property(), refused.value(), e.reason());
    }
  }

  /**
   * The value in the table's terms: Spring binds sizes as {@link DataSize}, the table counts bytes.
   */
  private static Object optionValue(Object bound) {
    return bound instanceof DataSize size ? size.toBytes() : bound;
  }

  /**
   * The bean property of {@link OnceProperties.Policy} that Spring binds an option's kebab-case
   * name to.
   */
  static String propertyName(RouteOption option) {
    return camelCase(option.name());
  }

  /** {@code max-wait} as Java spells it: {@code maxWait}. */
  static String camelCase(String kebab) {
    StringBuilder out = new StringBuilder();
    boolean upper = false;
    for (char c : kebab.toCharArray()) {
      if (c == '-') {
        upper = true;
      } else {
        out.append(upper ? Character.toUpperCase(c) : c);
        upper = false;
      }
    }
    return out.toString();
  }

  /**
   * Calls the core setter; a refusal is reported under the property's name. Does nothing for null.
   */
  static <T> void set(String property, @Nullable T value, Consumer<T> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new InvalidOncePropertyException(property, value, e.getMessage());
    }
  }
}

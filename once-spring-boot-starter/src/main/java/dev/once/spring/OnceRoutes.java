package dev.once.spring;

import dev.once.ExecutionPolicy;
import dev.once.http.Coverage;
import dev.once.http.HttpIdempotency;
import dev.once.http.RoutePolicy;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Every route of the application, in the order they are matched: the {@link Idempotent} handlers
 * (most specific pattern first), then {@code once.routes}, then {@code once.defaults} for the rest.
 */
final class OnceRoutes {

  /** The pattern of the route that takes every path no other route matches. */
  static final String FALLBACK = "/**";

  /**
   * One route.
   *
   * @param name where it was configured, for messages
   * @param transactionalProperty the property that made it transactional, or null
   */
  record Entry(
      String pattern,
      String name,
      RoutePolicy policy,
      boolean transactional,
      @Nullable String transactionalProperty) {}

  private final Entry defaults;
  private final List<Entry> routes;
  private final Coverage coverage;

  private OnceRoutes(Entry defaults, List<Entry> routes, Coverage coverage) {
    this.defaults = defaults;
    this.routes = List.copyOf(routes);
    this.coverage = coverage;
  }

  static OnceRoutes of(OnceProperties properties, Map<String, List<AnnotatedRoute>> annotated) {
    PolicyMapper.Layer defaultsLayer =
        PolicyMapper.Layer.properties("once.defaults", properties.getDefaults());
    Entry defaults = entry(FALLBACK, "once.defaults", List.of(defaultsLayer));
    List<Entry> routes = new ArrayList<>();
    annotated.forEach((pattern, handlers) -> routes.add(merged(pattern, handlers, defaultsLayer)));
    List<OnceProperties.Route> configured = properties.getRoutes();
    for (int i = 0; i < configured.size(); i++) {
      OnceProperties.Route route = configured.get(i);
      String prefix = "once.routes[" + i + "]";
      if (route.getPattern() == null || route.getPattern().isBlank()) {
        throw new InvalidOncePropertyException(
            prefix + ".pattern", null, "every route needs a pattern");
      }
      routes.add(
          entry(
              route.getPattern(),
              prefix,
              List.of(defaultsLayer, PolicyMapper.Layer.properties(prefix, route))));
    }
    return new OnceRoutes(defaults, routes, properties.getCoverage());
  }

  private static Entry entry(String pattern, String name, List<PolicyMapper.Layer> layers) {
    PolicyMapper.Resolved r = PolicyMapper.resolve(name, layers);
    return new Entry(pattern, name, r.policy(), r.transactional(), r.transactionalProperty());
  }

  /**
   * Handlers mapped to one path share its route: the union of their methods, and otherwise one
   * policy.
   */
  private static Entry merged(
      String pattern, List<AnnotatedRoute> handlers, PolicyMapper.Layer defaults) {
    Entry first = null;
    Set<String> methods = new TreeSet<>();
    for (AnnotatedRoute h : handlers) {
      Entry e = entry(pattern, h.handler(), List.of(defaults, h.layer()));
      methods.addAll(e.policy().methods());
      if (first == null) {
        first = e;
      } else if (!sameApartFromMethods(first, e)) {
        throw new InvalidOncePropertyException(
            "@Idempotent on " + first.name() + " and " + e.name(),
            null,
            "both handle "
                + pattern
                + " with different settings; give them the same settings or different paths");
      }
    }
    Objects.requireNonNull(first, "a mapped path has a handler");
    RoutePolicy policy = first.policy().toBuilder().methods(methods.toArray(String[]::new)).build();
    return new Entry(
        pattern, first.name(), policy, first.transactional(), first.transactionalProperty());
  }

  private static boolean sameApartFromMethods(Entry a, Entry b) {
    return a.transactional() == b.transactional()
        && a.policy().toBuilder()
            .methods("POST")
            .build()
            .equals(b.policy().toBuilder().methods("POST").build());
  }

  /**
   * Adds every route to the builder, most specific first, and the defaults for the rest, each as
   * the application's {@link OnceRouteCustomizer}s leave it.
   */
  HttpIdempotency.Builder applyTo(
      HttpIdempotency.Builder builder, List<OnceRouteCustomizer> customizers) {
    builder.defaults(customized(FALLBACK, defaults.policy(), customizers)).coverage(coverage);
    for (Entry e : routes) {
      try {
        builder.route(e.pattern(), customized(e.pattern(), e.policy(), customizers));
      } catch (IllegalArgumentException ex) {
        String property =
            e.name().startsWith("once.") ? e.name() + ".pattern" : "@Idempotent on " + e.name();
        throw new InvalidOncePropertyException(property, e.pattern(), ex.getMessage());
      }
    }
    return builder;
  }

  private static RoutePolicy customized(
      String pattern, RoutePolicy policy, List<OnceRouteCustomizer> customizers) {
    RoutePolicy result = policy;
    for (OnceRouteCustomizer c : customizers) {
      result =
          Objects.requireNonNull(
              c.customize(pattern, result),
              () -> c.getClass().getName() + " returned no policy for " + pattern);
    }
    return result;
  }

  /** The engine's default policy: the one of paths no route matches. */
  ExecutionPolicy defaultExecution() {
    return defaults.policy().execution();
  }

  /** The patterns whose requests run in a transaction. */
  Set<String> transactionalPatterns() {
    Set<String> patterns = new LinkedHashSet<>();
    for (Entry e : all()) {
      if (e.transactional()) {
        patterns.add(e.pattern());
      }
    }
    return patterns;
  }

  /** The first property that asks for a transaction, or null if none does. */
  @Nullable String firstTransactionalProperty() {
    return all().stream()
        .filter(Entry::transactional)
        .map(Entry::transactionalProperty)
        .findFirst()
        .orElse(null);
  }

  List<Entry> all() {
    List<Entry> all = new ArrayList<>(routes);
    all.add(defaults);
    return all;
  }
}

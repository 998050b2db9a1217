package dev.once.spring;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Finds the {@link Idempotent} handler methods and turns each path they are mapped to into a route.
 */
final class IdempotentHandlers {

  private static final Logger log = LoggerFactory.getLogger(IdempotentHandlers.class);
  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

  /**
   * One route from an annotated handler.
   *
   * @param pattern the once-http pattern
   * @param layer the handler's own settings
   * @param handler the method, for messages
   */
  record Found(String pattern, PolicyMapper.Layer layer, String handler) {}

  private IdempotentHandlers() {}

  /**
   * The routes of every annotated handler, most specific pattern first, each pattern once. Handlers
   * that share a pattern (a POST and a PATCH on one path) share a route covering both methods; if
   * their settings differ otherwise, the application refuses to start.
   */
  static Map<String, List<Found>> scan(
      List<RequestMappingHandlerMapping> mappings, String servletPrefix, Environment environment) {
    Map<String, List<Found>> byPattern = new LinkedHashMap<>();
    for (RequestMappingHandlerMapping mapping : mappings) {
      for (Map.Entry<RequestMappingInfo, HandlerMethod> e :
          mapping.getHandlerMethods().entrySet()) {
        HandlerMethod handler = e.getValue();
        Idempotent idempotent = annotationOf(handler);
        if (idempotent == null || !idempotent.key().isEmpty()) {
          // With a key expression the method is intercepted as a bean method (IdempotentMethods),
          // not routed by the header.
          continue;
        }
        String name = handler.getBeanType().getSimpleName() + "#" + handler.getMethod().getName();
        Set<String> mapped = new TreeSet<>();
        for (RequestMethod m : e.getKey().getMethodsCondition().getMethods()) {
          mapped.add(m.name());
        }
        OnceProperties.Policy policy =
            policyOf(
                idempotent,
                attribute -> "@Idempotent(" + attribute + ") on " + name,
                environment,
                mapped);
        if (policy == null) {
          log.warn(
              "@Idempotent on {} is ignored: the handler only answers safe methods {}",
              name,
              mapped);
          continue;
        }
        PolicyMapper.Layer layer =
            new PolicyMapper.Layer(
                policy, field -> "@Idempotent(" + PolicyMapper.camelCase(field) + ") on " + name);
        for (String springPattern : e.getKey().getPatternValues()) {
          String pattern = servletPrefix + SpringPatterns.toRoutePattern(springPattern);
          byPattern
              .computeIfAbsent(pattern, p -> new ArrayList<>())
              .add(new Found(pattern, layer, name));
        }
      }
    }
    Map<String, List<Found>> sorted = new LinkedHashMap<>();
    byPattern.keySet().stream()
        .sorted(SpringPatterns.MOST_SPECIFIC_FIRST)
        .forEach(p -> sorted.put(p, byPattern.get(p)));
    return sorted;
  }

  private static @Nullable Idempotent annotationOf(HandlerMethod handler) {
    Method method = handler.getMethod();
    Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
    return onMethod != null
        ? onMethod
        : AnnotatedElementUtils.findMergedAnnotation(handler.getBeanType(), Idempotent.class);
  }

  /** The annotation's settings, or null if the handler answers only safe methods. */
  static OnceProperties.@Nullable Policy policyOf(
      Idempotent a, UnaryOperator<String> name, Environment env, Set<String> mapped) {
    OnceProperties.Policy p = new OnceProperties.Policy();
    if (a.methods().length > 0) {
      p.setMethods(List.of(a.methods()));
    } else if (!mapped.isEmpty()) {
      Set<String> unsafe = new LinkedHashSet<>(mapped);
      unsafe.removeAll(SAFE);
      if (unsafe.isEmpty()) {
        return null;
      }
      p.setMethods(List.copyOf(unsafe));
    }
    p.setKeyRequired(single(a.keyRequired(), "keyRequired", name));
    p.setKeyHeader(a.keyHeader().isEmpty() ? null : env.resolveRequiredPlaceholders(a.keyHeader()));
    p.setReplay(single(a.replay(), "replay", name));
    p.setLease(parse(a.lease(), "lease", name, env, DurationStyle::detectAndParse));
    p.setTtl(parse(a.ttl(), "ttl", name, env, DurationStyle::detectAndParse));
    p.setInFlight(single(a.inFlight(), "inFlight", name));
    p.setMaxWait(parse(a.maxWait(), "maxWait", name, env, DurationStyle::detectAndParse));
    p.setInFlightRetryAfter(
        parse(
            a.inFlightRetryAfter(),
            "inFlightRetryAfter",
            name,
            env,
            DurationStyle::detectAndParse));
    p.setMaxWaitersPerKey(single(a.maxWaitersPerKey(), "maxWaitersPerKey", name));
    p.setFailureMode(single(a.failureMode(), "failureMode", name));
    p.setStoreRetryAfter(
        parse(a.storeRetryAfter(), "storeRetryAfter", name, env, DurationStyle::detectAndParse));
    p.setMaxRequestBytes(parse(a.maxRequestBytes(), "maxRequestBytes", name, env, DataSize::parse));
    p.setMaxResponseBytes(
        parse(a.maxResponseBytes(), "maxResponseBytes", name, env, DataSize::parse));
    p.setExcludedJsonPointers(
        a.excludedJsonPointers().length == 0 ? null : List.of(a.excludedJsonPointers()));
    p.setReplayHeaderDenylist(
        a.replayHeaderDenylist().length == 0 ? null : List.of(a.replayHeaderDenylist()));
    p.setTransactional(single(a.transactional(), "transactional", name));
    return p;
  }

  private static <T> @Nullable T parse(
      String text,
      String attribute,
      UnaryOperator<String> name,
      Environment env,
      Function<String, T> parser) {
    if (text.isEmpty()) {
      return null;
    }
    try {
      return parser.apply(env.resolveRequiredPlaceholders(text).trim());
    } catch (IllegalArgumentException e) {
      throw new InvalidOncePropertyException(name.apply(attribute), text, e.getMessage());
    }
  }

  private static @Nullable Boolean single(
      boolean[] values, String attribute, UnaryOperator<String> name) {
    if (values.length > 1) {
      throw new InvalidOncePropertyException(
          name.apply(attribute), Arrays.toString(values), "give at most one value");
    }
    return values.length == 0 ? null : values[0];
  }

  private static @Nullable Integer single(
      int[] values, String attribute, UnaryOperator<String> name) {
    return single(Arrays.stream(values).boxed().toArray(Integer[]::new), attribute, name);
  }

  private static <T> @Nullable T single(T[] values, String attribute, UnaryOperator<String> name) {
    if (values.length > 1) {
      throw new InvalidOncePropertyException(
          name.apply(attribute), Arrays.toString(values), "give at most one value");
    }
    return values.length == 0 ? null : values[0];
  }
}

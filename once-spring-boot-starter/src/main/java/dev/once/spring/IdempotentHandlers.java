package dev.once.spring;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.env.Environment;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;

/**
 * Finds the {@link Idempotent} handler methods and turns each path they are mapped to into a route.
 * The same for Spring MVC and WebFlux: each web stack's auto-configuration lists its handler
 * mappings as {@link Mapped} entries, and the rest is shared. It names spring-web's types only,
 * which both stacks have, never one stack's own.
 */
final class IdempotentHandlers {

  private static final Logger log = LoggerFactory.getLogger(IdempotentHandlers.class);

  private IdempotentHandlers() {}

  /**
   * One handler method as its web stack maps it.
   *
   * @param methods the HTTP methods it is mapped to (empty: every method)
   * @param patterns its Spring path patterns
   */
  record Mapped(HandlerMethod handler, Set<RequestMethod> methods, Set<String> patterns) {}

  /**
   * The routes of every annotated handler, most specific pattern first, each pattern once. Handlers
   * that share a pattern (a POST and a PATCH on one path) share a route covering both methods; if
   * their settings differ otherwise, the application refuses to start.
   *
   * @param prefix put before every pattern: the {@code DispatcherServlet}'s path in a servlet
   *     application, nothing in a reactive one (its filter matches paths within the application)
   */
  static Map<String, List<AnnotatedRoute>> scan(
      List<Mapped> handlers, String prefix, Environment environment) {
    Map<String, List<AnnotatedRoute>> byPattern = new LinkedHashMap<>();
    for (Mapped mapped : handlers) {
      HandlerMethod handler = mapped.handler();
      Idempotent idempotent = annotationOf(handler);
      if (idempotent == null || !idempotent.key().isEmpty()) {
        // With a key expression the method is intercepted as a bean method (IdempotentMethods),
        // not routed by the header.
        continue;
      }
      String name = handler.getBeanType().getSimpleName() + "#" + handler.getMethod().getName();
      Set<String> methods = new TreeSet<>();
      for (RequestMethod m : mapped.methods()) {
        methods.add(m.name());
      }
      OnceProperties.Policy policy =
          IdempotentAttributes.policyOf(
              idempotent,
              attribute -> "@Idempotent(" + attribute + ") on " + name,
              environment,
              methods);
      if (policy == null) {
        log.warn(
            "@Idempotent on {} is ignored: the handler only answers safe methods {}",
            name,
            methods);
        continue;
      }
      PolicyMapper.Layer layer =
          new PolicyMapper.Layer(
              policy, field -> "@Idempotent(" + PolicyMapper.camelCase(field) + ") on " + name);
      for (String springPattern : mapped.patterns()) {
        String pattern = prefix + SpringPatterns.toRoutePattern(springPattern);
        byPattern
            .computeIfAbsent(pattern, p -> new ArrayList<>())
            .add(new AnnotatedRoute(pattern, layer, name));
      }
    }
    Map<String, List<AnnotatedRoute>> sorted = new LinkedHashMap<>();
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
}

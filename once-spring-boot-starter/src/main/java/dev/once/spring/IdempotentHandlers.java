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
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Finds the {@link Idempotent} handler methods and turns each path they are mapped to into a route.
 */
final class IdempotentHandlers {

  private static final Logger log = LoggerFactory.getLogger(IdempotentHandlers.class);

  private IdempotentHandlers() {}

  /**
   * The routes of every annotated handler, most specific pattern first, each pattern once. Handlers
   * that share a pattern (a POST and a PATCH on one path) share a route covering both methods; if
   * their settings differ otherwise, the application refuses to start.
   */
  static Map<String, List<AnnotatedRoute>> scan(
      List<RequestMappingHandlerMapping> mappings, String servletPrefix, Environment environment) {
    Map<String, List<AnnotatedRoute>> byPattern = new LinkedHashMap<>();
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
            IdempotentAttributes.policyOf(
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
              .add(new AnnotatedRoute(pattern, layer, name));
        }
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

package dev.once.spring;

import dev.once.http.HttpIdempotency;
import dev.once.webflux.OnceWebFilter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.WebFilter;
import org.springframework.web.util.pattern.PathPattern;

/**
 * Installs {@link OnceWebFilter} in a reactive (WebFlux) application, over the HTTP layer {@link
 * OnceAutoConfiguration} built from the same {@code once.*} properties and store choice as a
 * servlet application's. It names nothing of the servlet API: a WebFlux application has none.
 *
 * <p>{@link Idempotent} WebFlux handlers make routes as Spring MVC ones do. What a reactive
 * application does not get: transactional routes (a transaction is bound to a thread, a reactive
 * handler is not: a route that asks for one stops startup) and {@code once.filter.url-patterns}
 * (the routes alone say which requests are guarded).
 */
@AutoConfiguration(
    after = OnceAutoConfiguration.class,
    afterName = {
      // Boot 3's name, then Boot 4's, as in OnceAutoConfiguration.
      "org.springframework.boot.autoconfigure.web.reactive.WebFluxAutoConfiguration",
      "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration"
    })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({WebFilter.class, OnceWebFilter.class})
@OnceAutoConfiguration.ConditionalOnOnceEnabled
public class OnceReactiveAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  OnceWebFilter onceWebFilter(HttpIdempotency http, OnceRoutes routes, OnceProperties properties) {
    String transactional = routes.firstTransactionalProperty();
    if (transactional != null) {
      throw new InvalidOncePropertyException(
          transactional,
          true,
          "transactional routes need a servlet application: a reactive handler is not bound to"
              + " the thread a transaction is");
    }
    OnceWebFilter.Builder filter =
        OnceWebFilter.builder(http).order(properties.getFilter().getOrder());
    Duration bodyTimeout = properties.getFilter().getBodyTimeout();
    if (bodyTimeout != null) {
      try {
        filter.bodyTimeout(bodyTimeout);
      } catch (IllegalArgumentException e) {
        throw new InvalidOncePropertyException(
            "once.filter.body-timeout", bodyTimeout, e.getMessage());
      }
    }
    return filter.build();
  }

  /** The routes of {@link Idempotent} WebFlux handlers, as of Spring MVC ones. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(RequestMappingHandlerMapping.class)
  static class HandlerConfiguration {
    @Bean
    OnceAutoConfiguration.AnnotatedRoutes onceAnnotatedRoutes(
        ObjectProvider<RequestMappingHandlerMapping> mappings, Environment environment) {
      // No prefix: the filter matches paths within the application, as the handlers are mapped.
      return () ->
          IdempotentHandlers.scan(handlers(mappings.orderedStream().toList()), "", environment);
    }

    private static List<IdempotentHandlers.Mapped> handlers(
        List<RequestMappingHandlerMapping> mappings) {
      List<IdempotentHandlers.Mapped> found = new ArrayList<>();
      for (RequestMappingHandlerMapping mapping : mappings) {
        mapping
            .getHandlerMethods()
            .forEach(
                (info, handler) -> {
                  Set<String> patterns = new LinkedHashSet<>();
                  for (PathPattern pattern : info.getPatternsCondition().getPatterns()) {
                    patterns.add(pattern.getPatternString());
                  }
                  found.add(
                      new IdempotentHandlers.Mapped(
                          handler, info.getMethodsCondition().getMethods(), patterns));
                });
      }
      return found;
    }
  }
}

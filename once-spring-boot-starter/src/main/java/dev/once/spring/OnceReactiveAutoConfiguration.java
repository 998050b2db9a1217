package dev.once.spring;

import dev.once.http.HttpIdempotency;
import dev.once.webflux.OnceWebFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.server.WebFilter;

/**
 * Installs {@link OnceWebFilter} in a reactive (WebFlux) application, over the HTTP layer {@link
 * OnceAutoConfiguration} built from the same {@code once.*} properties and store choice as a
 * servlet application's. It names nothing of the servlet API: a WebFlux application has none.
 *
 * <p>What a reactive application does not get: {@link Idempotent} handlers (they are found through
 * Spring MVC's handler mappings; use {@code once.routes}), transactional routes (a transaction is
 * bound to a thread, a reactive handler is not: a route that asks for one stops startup) and {@code
 * once.filter.url-patterns} (the routes alone say which requests are guarded).
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
    return OnceWebFilter.builder(http).order(properties.getFilter().getOrder()).build();
  }
}

package dev.once.spring;

import dev.once.Once;
import dev.once.OnceListener;
import dev.once.http.HttpIdempotency;
import dev.once.store.IdempotencyStore;
import dev.once.webflux.OnceWebFilter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.server.WebFilter;

/**
 * Installs {@link OnceWebFilter} in a reactive (WebFlux) application from the same {@code once.*}
 * properties as {@link OnceAutoConfiguration} does {@code OnceFilter} in a servlet one, over the
 * same store choice. The two never both apply: each is conditional on its kind of web application.
 *
 * <p>Nothing is mapped twice: the engine, the routes and the HTTP semantics are built by {@link
 * OnceAutoConfiguration}'s own bean methods, and its store, encryption, observation, purge and
 * health configurations are imported as they are. What a reactive application does not get: {@link
 * Idempotent} handlers (they are found through Spring MVC's handler mappings; use {@code
 * once.routes}), transactional routes (a transaction is bound to a thread, a reactive handler is
 * not: a route that asks for one stops startup) and {@code once.filter.url-patterns} (the routes
 * alone say which requests are guarded).
 */
@AutoConfiguration(
    afterName = {
      // Boot 3's name, then Boot 4's, as in OnceAutoConfiguration.
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
      "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.reactive.WebFluxAutoConfiguration",
      "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
      "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
    })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({WebFilter.class, OnceWebFilter.class})
@OnceInfrastructure.ConditionalOnOnceEnabled
@Import(OnceInfrastructure.class)
public class OnceReactiveAutoConfiguration {

  @Bean
  OnceRoutes onceRoutes(
      OnceProperties properties, ObjectProvider<OnceAutoConfiguration.AnnotatedRoutes> annotated) {
    OnceRoutes routes = OnceAutoConfiguration.routes(properties, annotated);
    String transactional = routes.firstTransactionalProperty();
    if (transactional != null) {
      throw new InvalidOncePropertyException(
          transactional,
          true,
          "transactional routes need a servlet application: a reactive handler is not bound to"
              + " the thread a transaction is");
    }
    return routes;
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  Once once(
      IdempotencyStore store,
      OnceRoutes routes,
      ObjectProvider<TransactionJoin> join,
      ObjectProvider<OnceAutoConfiguration.StoreDecorator> decorators,
      ObjectProvider<OnceListener> listeners) {
    return OnceAutoConfiguration.engine(store, routes, join, decorators, listeners);
  }

  @Bean
  @ConditionalOnMissingBean
  HttpIdempotency onceHttpIdempotency(
      Once once,
      OnceRoutes routes,
      OnceProperties properties,
      ObjectProvider<dev.once.http.ScopeResolver> scope,
      ObjectProvider<OnceRouteCustomizer> customizers) {
    return OnceAutoConfiguration.http(
        once, routes, properties, scope.getIfUnique(), customizers.orderedStream().toList());
  }

  @Bean
  @ConditionalOnMissingBean
  OnceWebFilter onceWebFilter(HttpIdempotency http, OnceProperties properties) {
    return OnceWebFilter.builder(http).order(properties.getFilter().getOrder()).build();
  }
}

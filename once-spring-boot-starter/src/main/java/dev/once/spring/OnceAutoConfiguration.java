package dev.once.spring;

import dev.once.Once;
import dev.once.OnceListener;
import dev.once.http.HttpIdempotency;
import dev.once.http.NewKeyLimit;
import dev.once.http.ScopeResolver;
import dev.once.micrometer.ObservedEvents;
import dev.once.store.EncryptingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.Keyring;
import dev.once.store.jdbc.Purger;
import io.micrometer.observation.ObservationRegistry;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * What every kind of application gets from the starter, a servlet, a reactive or a non-web one: the
 * {@code once.*} properties, the store chosen from the beans present (the application's own {@link
 * IdempotencyStore} bean; else a PostgreSQL or MariaDB store on its {@link DataSource}; else a
 * Redis store on its Lettuce connection factory; else an in-memory store, with a warning), the
 * engine, the routes, and encryption, observations, the purger, health and the {@code once}
 * Actuator endpoint.
 *
 * <p>It names nothing of a web stack: the servlet filter ({@link OnceServletAutoConfiguration}),
 * the reactive one ({@link OnceReactiveAutoConfiguration}) and {@code @Idempotent} bean methods
 * ({@link OnceMethodsAutoConfiguration}) are auto-configurations of their own, each conditional on
 * what it needs, and built on the beans made here. So an application without the servlet API never
 * loads a class that names it.
 */
@AutoConfiguration(
    afterName = {
      // Each one named twice: as Boot 3 calls it, then as Boot 4 does (Boot moved them into
      // per-technology modules); a name that is not on the class path is left out of the ordering.
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
      "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
      "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
    })
@OnceAutoConfiguration.ConditionalOnOnceEnabled
@EnableConfigurationProperties(OnceProperties.class)
@Import({
  // The store choices in order of preference; imported, not nested, because Spring registers
  // nested configuration classes in no guaranteed order.
  StoreConfigurations.Jdbc.class,
  StoreConfigurations.Redis.class,
  StoreConfigurations.InMemory.class,
  OnceHealthConfiguration.class
})
public class OnceAutoConfiguration {

  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(OnceAutoConfiguration.class);

  /** Once's auto-configurations are on unless {@code once.enabled=false}. */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.TYPE)
  @Documented
  @ConditionalOnProperty(
      prefix = "once",
      name = "enabled",
      havingValue = "true",
      matchIfMissing = true)
  @interface ConditionalOnOnceEnabled {}

  /**
   * Wraps the store the engine uses (observations); a separate type so that Micrometer stays
   * optional.
   */
  @FunctionalInterface
  interface StoreDecorator extends UnaryOperator<IdempotencyStore> {}

  /**
   * The routes of {@link Idempotent} handlers, found by the web stack's own auto-configuration; a
   * separate type so that Spring MVC and WebFlux stay optional.
   */
  @FunctionalInterface
  interface AnnotatedRoutes {
    Map<String, List<AnnotatedRoute>> find();
  }

  /** The routes from the properties and the annotated handlers, if a web stack found some. */
  @Bean
  @ConditionalOnMissingBean
  OnceRoutes onceRoutes(OnceProperties properties, ObjectProvider<AnnotatedRoutes> annotated) {
    AnnotatedRoutes found = annotated.getIfAvailable();
    return OnceRoutes.of(properties, found == null ? Map.of() : found.find());
  }

  /**
   * The engine over the chosen store, joined to a request's transaction where a transactional route
   * opened one ({@link TransactionJoin}, servlet applications only), then wrapped by every {@link
   * StoreDecorator} in order.
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  Once once(
      IdempotencyStore store,
      OnceRoutes routes,
      ObjectProvider<TransactionJoin> join,
      ObjectProvider<StoreDecorator> decorators,
      ObjectProvider<OnceListener> listeners) {
    TransactionJoin transactions = join.getIfAvailable();
    IdempotencyStore used = transactions == null ? store : new JoiningStore(store, transactions);
    for (StoreDecorator decorator : decorators.orderedStream().toList()) {
      used = decorator.apply(used);
    }
    return Once.builder(used)
        .defaults(routes.defaultExecution())
        .listener(CompositeListener.of(listeners.orderedStream().toList()))
        .build();
  }

  /**
   * The HTTP layer over the engine, from the routes and properties, which the servlet and the
   * reactive filter both use; an application without a web server has no requests to guard.
   */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnWebApplication
  HttpIdempotency onceHttpIdempotency(
      Once once,
      OnceRoutes routes,
      OnceProperties properties,
      ObjectProvider<ScopeResolver> scope,
      ObjectProvider<OnceRouteCustomizer> customizers) {
    return http(
        once, routes, properties, scope.getIfUnique(), customizers.orderedStream().toList());
  }

  /**
   * @param customScope the application's own {@link ScopeResolver} bean, which replaces {@code
   *     once.scope.*} and nothing else; null to build the scope from those properties
   * @param customizers the application's {@link OnceRouteCustomizer} beans, in order
   */
  private static HttpIdempotency http(
      Once once,
      OnceRoutes routes,
      OnceProperties properties,
      @Nullable ScopeResolver customScope,
      List<OnceRouteCustomizer> customizers) {
    ScopeResolver scope;
    if (customScope != null) {
      scope = customScope;
      log.info("Once scope: the application's ScopeResolver bean (once.scope.* is not used)");
    } else {
      scope = scope(properties.getScope());
      OnceProperties.Scope configured = properties.getScope();
      if (configured.getType() == OnceProperties.ScopeType.GLOBAL) {
        log.warn(
            "Once: idempotency keys are not tenant-scoped (once.scope.type=global): every client"
                + " shares one key space, so a key one client sends can replay another client's"
                + " response. Set once.scope.type=header or principal, or declare a ScopeResolver"
                + " bean, unless this service has a single client.");
      } else if (!configured.isRequired()) {
        log.warn(
            "Once: keyed requests that name no tenant ({}) share one key space, so a key one such"
                + " client sends can replay another's response. Set once.scope.required=true to"
                + " refuse them (400 tenant-missing) if every client names its tenant.",
            configured.getType() == OnceProperties.ScopeType.HEADER
                ? "no " + configured.getHeader() + " header"
                : "not authenticated");
      }
    }
    HttpIdempotency.Builder b =
        routes.applyTo(HttpIdempotency.builder(once).scope(scope), customizers);
    OnceProperties.NewKeys newKeys = properties.getNewKeys();
    if (newKeys.getPerSecond() != null) {
      NewKeyLimit.Builder limit;
      try {
        limit = NewKeyLimit.perSecond(newKeys.getPerSecond());
      } catch (IllegalArgumentException e) {
        throw new InvalidOncePropertyException(
            "once.new-keys.per-second", newKeys.getPerSecond(), e.getMessage());
      }
      PolicyMapper.set("once.new-keys.burst", newKeys.getBurst(), limit::burst);
      PolicyMapper.set("once.new-keys.max-tenants", newKeys.getMaxTenants(), limit::maxTenants);
      b.newKeyLimit(limit.build());
    } else if (newKeys.getBurst() != null || newKeys.getMaxTenants() != null) {
      throw new InvalidOncePropertyException(
          "once.new-keys.per-second",
          null,
          "must be set when once.new-keys.burst or once.new-keys.max-tenants is");
    }
    return b.build();
  }

  private static ScopeResolver scope(OnceProperties.Scope scope) {
    return switch (scope.getType()) {
      case PRINCIPAL ->
          scope.isRequired() ? ScopeResolver.requiredPrincipal() : ScopeResolver.principal();
      case GLOBAL -> ScopeResolver.global();
      case HEADER -> {
        try {
          yield scope.isRequired()
              ? ScopeResolver.requiredHeader(scope.getHeader())
              : ScopeResolver.header(scope.getHeader());
        } catch (IllegalArgumentException e) {
          throw new InvalidOncePropertyException(
              "once.scope.header", scope.getHeader(), e.getMessage());
        }
      }
    };
  }

  /**
   * A reactive application without once-webflux gets no filter; said at startup, since its routes
   * would otherwise pass unguarded without a word.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnMissingClass("dev.once.webflux.OnceWebFilter")
  static class MissingWebFluxAdapter {
    MissingWebFluxAdapter() {
      log.warn(
          "Once: this is a reactive (WebFlux) application, but dev.once:once-webflux is not on the"
              + " class path, so no HTTP request is guarded (once.routes and once.defaults do not"
              + " apply). Add the dependency (docs/webflux.md); @Idempotent(key) methods work"
              + " without it.");
    }
  }

  /**
   * Encrypts what the store keeps, innermost of the decorators, so that observations time the
   * encryption with the store call it belongs to. The keys are parsed here so that a bad keyring
   * stops startup with the property's name and never its value.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "once.encryption", name = "keys")
  static class EncryptionConfiguration {
    @Bean
    @org.springframework.core.annotation.Order(org.springframework.core.Ordered.HIGHEST_PRECEDENCE)
    StoreDecorator onceEncryption(OnceProperties properties) {
      Keyring keyring;
      try {
        keyring = Keyring.parse(properties.getEncryption().getKeys());
      } catch (IllegalArgumentException e) {
        throw new InvalidOncePropertyException("once.encryption.keys", null, e.getMessage());
      }
      boolean readPlaintext = properties.getEncryption().isReadPlaintext();
      return store -> EncryptingStore.builder(store, keyring).readPlaintext(readPlaintext).build();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "io.micrometer.observation.ObservationRegistry",
        "dev.once.micrometer.ObservedEvents"
      })
  @ConditionalOnBean(type = "io.micrometer.observation.ObservationRegistry")
  @ConditionalOnProperty(
      prefix = "once.observation",
      name = "enabled",
      havingValue = "true",
      matchIfMissing = true)
  static class ObservationConfiguration {
    /**
     * The engine's decisions on the request's observation (its span in a traced application), and
     * each store call an observation of its own beneath it.
     */
    @Bean
    OnceListener onceObservedEvents(ObservationRegistry registry) {
      return ObservedEvents.of(registry);
    }
  }

  /** The {@code once} Actuator endpoint, when Actuator is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
  static class EndpointConfiguration {
    @Bean
    @ConditionalOnMissingBean
    OnceEndpoint onceEndpoint(
        IdempotencyStore store, ObjectProvider<HttpIdempotency> http, OnceProperties properties) {
      return new OnceEndpoint(store, http::getIfAvailable, properties.getScope().getHeader());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.once.store.jdbc.Purger")
  @ConditionalOnProperty(
      prefix = "once.store.purge",
      name = "enabled",
      havingValue = "true",
      matchIfMissing = true)
  static class PurgeConfiguration {
    @Bean(destroyMethod = "close")
    Purger oncePurger(IdempotencyStore store, OnceProperties properties) {
      Purger.Builder b = Purger.builder(store);
      PolicyMapper.set(
          "once.store.purge.batch-size",
          properties.getStore().getPurge().getBatchSize(),
          b::batchSize);
      PolicyMapper.set(
          "once.store.purge.interval", properties.getStore().getPurge().getInterval(), b::interval);
      return b.start();
    }
  }
}

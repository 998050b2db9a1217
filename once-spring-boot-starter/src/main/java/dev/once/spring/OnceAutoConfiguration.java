package dev.once.spring;

import dev.once.Once;
import dev.once.OnceListener;
import dev.once.http.HttpIdempotency;
import dev.once.http.NewKeyLimit;
import dev.once.http.ScopeResolver;
import dev.once.micrometer.ObservedEvents;
import dev.once.micrometer.ObservedStore;
import dev.once.servlet.OnceFilter;
import dev.once.servlet.TransactionBoundary;
import dev.once.store.EncryptingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.Keyring;
import dev.once.store.jdbc.Purger;
import dev.once.store.jdbc.TransactionalStore;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Installs {@link OnceFilter} in a servlet application from the {@code once.*} properties and the
 * {@link Idempotent} handlers, over a store chosen from the beans present: the application's own
 * {@link IdempotencyStore} bean; else a PostgreSQL or MariaDB store on its {@link DataSource}; else
 * a Redis store on its Lettuce connection factory; else an in-memory store, with a warning.
 */
@AutoConfiguration(
    afterName = {
      // Each one named twice: as Boot 3 calls it, then as Boot 4 does (Boot moved them into
      // per-technology modules); a name that is not on the class path is left out of the ordering.
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration",
      "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
      "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
      "org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration",
      "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
      "org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration",
      "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration",
      "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration",
      "org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
      "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
    })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@OnceInfrastructure.ConditionalOnOnceEnabled
@Import(OnceInfrastructure.class)
public class OnceAutoConfiguration {

  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(OnceAutoConfiguration.class);

  @Bean
  OnceRoutes onceRoutes(OnceProperties properties, ObjectProvider<AnnotatedRoutes> annotated) {
    return routes(properties, annotated);
  }

  /** The routes from the properties and the annotated handlers; also the reactive side's. */
  static OnceRoutes routes(OnceProperties properties, ObjectProvider<AnnotatedRoutes> annotated) {
    AnnotatedRoutes found = annotated.getIfAvailable();
    return OnceRoutes.of(properties, found == null ? Map.of() : found.find());
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  Once once(
      IdempotencyStore store,
      OnceRoutes routes,
      ObjectProvider<TransactionJoin> join,
      ObjectProvider<StoreDecorator> decorators,
      ObjectProvider<OnceListener> listeners) {
    return engine(store, routes, join, decorators, listeners);
  }

  /** The engine over the chosen store; also built by {@link OnceMethodsAutoConfiguration}. */
  static Once engine(
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

  @Bean
  @ConditionalOnMissingBean
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
   * The HTTP layer over the engine, from the routes and properties; also the reactive side's.
   *
   * @param customScope the application's own {@link ScopeResolver} bean, which replaces {@code
   *     once.scope.*} and nothing else; null to build the scope from those properties
   * @param customizers the application's {@link OnceRouteCustomizer} beans, in order
   */
  static HttpIdempotency http(
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

  @Bean
  FilterRegistrationBean<OnceFilter> onceFilter(
      HttpIdempotency http,
      OnceRoutes routes,
      OnceProperties properties,
      ObjectProvider<TransactionBoundary> boundary) {
    String transactional = routes.firstTransactionalProperty();
    TransactionBoundary transactions = boundary.getIfAvailable(() -> TransactionBoundary.NONE);
    if (transactional != null && transactions == TransactionBoundary.NONE) {
      throw new InvalidOncePropertyException(
          transactional,
          true,
          "transactional routes need a PostgreSQL or"
              + " MariaDB store on the application's DataSource and a PlatformTransactionManager");
    }
    FilterRegistrationBean<OnceFilter> registration =
        new FilterRegistrationBean<>(OnceFilter.builder(http).transactions(transactions).build());
    registration.setName("onceFilter");
    registration.setOrder(properties.getFilter().getOrder());
    registration.setUrlPatterns(properties.getFilter().getUrlPatterns());
    registration.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.ASYNC);
    registration.setAsyncSupported(true);
    return registration;
  }

  /**
   * Wraps the store the engine uses (observations); a separate type so that Micrometer stays
   * optional.
   */
  @FunctionalInterface
  interface StoreDecorator extends UnaryOperator<IdempotencyStore> {}

  /**
   * The routes of {@link Idempotent} handlers; a separate type so that Spring MVC stays optional.
   */
  @FunctionalInterface
  interface AnnotatedRoutes {
    Map<String, List<IdempotentHandlers.Found>> find();
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
  @ConditionalOnClass(RequestMappingHandlerMapping.class)
  static class HandlerConfiguration {
    @Bean
    AnnotatedRoutes onceAnnotatedRoutes(
        ObjectProvider<RequestMappingHandlerMapping> mappings,
        BeanFactory beans,
        Environment environment) {
      return () ->
          IdempotentHandlers.scan(
              mappings.orderedStream().toList(), DispatcherServletPrefix.of(beans), environment);
    }

    /** A 404 or 405 that no handler produced is never recorded. */
    @Bean
    HandlerExceptionResolver onceUnhandledRequests() {
      return new UnhandledRequests();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "dev.once.store.jdbc.TransactionalStore",
        "org.springframework.jdbc.datasource.DataSourceUtils"
      })
  @ConditionalOnBean({DataSource.class, PlatformTransactionManager.class})
  static class TransactionConfiguration {
    @Bean
    @Nullable TransactionJoin onceTransactionJoin(
        IdempotencyStore store, ObjectProvider<DataSource> dataSource) {
      TransactionalStore transactional = JdbcStores.transactional(store);
      DataSource ds = dataSource.getIfUnique();
      // Without a transactional view, or with several DataSources to choose from, no route can
      // join.
      return transactional == null || ds == null
          ? null
          : new TransactionJoin(transactional::on, ds);
    }

    @Bean
    @ConditionalOnMissingBean(TransactionBoundary.class)
    TransactionBoundary onceTransactionBoundary(
        ObjectProvider<TransactionJoin> join,
        PlatformTransactionManager transactions,
        OnceRoutes routes) {
      TransactionJoin j = join.getIfAvailable();
      return j == null
          ? TransactionBoundary.NONE
          : new SpringTransactionBoundary(transactions, j, routes.transactionalPatterns());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {"io.micrometer.observation.ObservationRegistry", "dev.once.micrometer.ObservedStore"})
  @ConditionalOnBean(type = "io.micrometer.observation.ObservationRegistry")
  @ConditionalOnProperty(
      prefix = "once.observation",
      name = "enabled",
      havingValue = "true",
      matchIfMissing = true)
  static class ObservationConfiguration {
    @Bean
    StoreDecorator onceStoreObservation(ObservationRegistry registry) {
      return store -> ObservedStore.wrap(store, registry);
    }

    /** The engine's decisions on the request's observation: its span in a traced application. */
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
    OnceEndpoint onceEndpoint(IdempotencyStore store) {
      return new OnceEndpoint(store);
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

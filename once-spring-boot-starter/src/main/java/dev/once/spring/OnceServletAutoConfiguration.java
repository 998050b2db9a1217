package dev.once.spring;

import dev.once.http.HttpIdempotency;
import dev.once.servlet.OnceFilter;
import dev.once.servlet.TransactionBoundary;
import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.TransactionalStore;
import jakarta.servlet.DispatcherType;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * Installs {@link OnceFilter} in a servlet application, over the HTTP layer {@link
 * OnceAutoConfiguration} built, with the routes of the {@link Idempotent} handlers Spring MVC maps
 * and, for transactional routes, the request's transaction. The only auto-configuration that names
 * the servlet API, and conditional on it by name, so that an application without it never loads
 * this class.
 */
@AutoConfiguration(
    after = OnceAutoConfiguration.class,
    afterName = {
      // Boot 3's name, then Boot 4's, as in OnceAutoConfiguration.
      "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
      "org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration",
      "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
      "org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration",
      "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration",
      "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration",
      "org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration"
    })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = {"jakarta.servlet.Filter", "dev.once.servlet.OnceFilter"})
@OnceAutoConfiguration.ConditionalOnOnceEnabled
public class OnceServletAutoConfiguration {

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

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(RequestMappingHandlerMapping.class)
  static class HandlerConfiguration {
    @Bean
    OnceAutoConfiguration.AnnotatedRoutes onceAnnotatedRoutes(
        ObjectProvider<RequestMappingHandlerMapping> mappings,
        BeanFactory beans,
        Environment environment) {
      return () ->
          IdempotentHandlers.scan(
              handlers(mappings.orderedStream().toList()),
              DispatcherServletPrefix.of(beans),
              environment);
    }

    private static List<IdempotentHandlers.Mapped> handlers(
        List<RequestMappingHandlerMapping> mappings) {
      List<IdempotentHandlers.Mapped> found = new ArrayList<>();
      for (RequestMappingHandlerMapping mapping : mappings) {
        mapping
            .getHandlerMethods()
            .forEach(
                (info, handler) ->
                    found.add(
                        new IdempotentHandlers.Mapped(
                            handler,
                            info.getMethodsCondition().getMethods(),
                            info.getPatternValues())));
      }
      return found;
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
}

package dev.once.spring;

import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store choices, imported in order of preference (the first whose conditions hold defines the
 * store; the application's own bean beats them all). They live outside the auto-configuration class
 * because Spring registers a configuration class's nested classes in no guaranteed order.
 */
final class StoreConfigurations {

  private static final Logger log = LoggerFactory.getLogger(StoreConfigurations.class);

  private StoreConfigurations() {}

  /** The application's DataSource, if once-store-jdbc supports its database. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.once.store.jdbc.PostgresStore")
  @ConditionalOnBean(DataSource.class)
  @ConditionalOnMissingBean(IdempotencyStore.class)
  @ConditionalOnProperty(prefix = "once.store", name = "type", havingValue = "auto", matchIfMissing = true)
  static class Jdbc {
    @Bean(destroyMethod = "close")
    IdempotencyStore onceStore(DataSource dataSource, OnceProperties properties) {
      return JdbcStores.open(dataSource, properties.getStore());
    }
  }

  /** The last resort: in memory, with a warning unless the application asked for it. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingBean(IdempotencyStore.class)
  static class InMemory {
    @Bean(destroyMethod = "close")
    IdempotencyStore onceStore(OnceProperties properties) {
      if (properties.getStore().getType() != OnceProperties.StoreType.MEMORY) {
        log.warn("No IdempotencyStore bean and no supported DataSource: idempotency records are kept IN MEMORY,"
            + " lost on restart and not shared between instances. Add a PostgreSQL or MariaDB DataSource with"
            + " once-store-jdbc, define an IdempotencyStore bean, or set once.store.type=memory to accept this.");
      }
      return InMemoryStore.create();
    }
  }
}

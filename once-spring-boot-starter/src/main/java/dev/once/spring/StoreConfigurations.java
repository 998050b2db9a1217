package dev.once.spring;

import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The store choices, imported in order of preference (the first whose conditions hold defines the
 * store; the application's own bean beats them all). They live outside the auto-configuration class
 * because Spring registers a configuration class's nested classes in no guaranteed order.
 */
final class StoreConfigurations {

  private static final Logger log = LoggerFactory.getLogger(StoreConfigurations.class);

  private StoreConfigurations() {}

  /** The application's DataSource, if once-store-jdbc is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "dev.once.store.jdbc.PostgresStore")
  @ConditionalOnBean(DataSource.class)
  @ConditionalOnMissingBean(IdempotencyStore.class)
  @ConditionalOnExpression("'${once.store.type:auto}'.toLowerCase() matches 'auto|jdbc'")
  static class Jdbc {
    @Bean(destroyMethod = "close")
    IdempotencyStore onceStore(
        DataSource dataSource,
        OnceProperties properties,
        ObjectProvider<RedisStoreOpener> redis,
        Environment environment) {
      IdempotencyStore store =
          JdbcStores.open(
              dataSource, properties.getStore(), environment.getProperty("spring.datasource.url"));
      if (store != null) {
        return store;
      }
      // A database the JDBC store does not support (an embedded H2 for the application's own
      // data, say) should not hide a Redis the application also has.
      RedisStoreOpener opener =
          properties.getStore().getType() == OnceProperties.StoreType.AUTO
              ? redis.getIfAvailable()
              : null;
      return opener != null
          ? opener.open()
          : InMemory.create(properties, JdbcStores.productName(dataSource));
    }
  }

  /** Opens the Redis store; a bean of its own so that the Redis classes stay optional. */
  @FunctionalInterface
  interface RedisStoreOpener {
    IdempotencyStore open();
  }

  /** The application's Lettuce connection factory, if once-store-redis is on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "dev.once.store.redis.RedisStore",
        "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory"
      })
  @ConditionalOnBean(
      type = "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory")
  static class Redis {
    @Bean
    RedisStoreOpener onceRedisStoreOpener(
        org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory factory,
        OnceProperties properties) {
      return () -> RedisStores.open(factory, properties.getStore().getRedis());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(IdempotencyStore.class)
    @ConditionalOnExpression("'${once.store.type:auto}'.toLowerCase() matches 'auto|redis'")
    IdempotencyStore onceStore(RedisStoreOpener opener) {
      return opener.open();
    }
  }

  /**
   * The last resort: in memory, with a warning unless the application asked for it. Declared as
   * {@link InMemoryStore} so that a test can inject it by that type and {@link InMemoryStore#clear}
   * it (docs/testing.md).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnMissingBean(IdempotencyStore.class)
  static class InMemory {
    @Bean(destroyMethod = "close")
    InMemoryStore onceStore(OnceProperties properties) {
      return create(properties, null);
    }

    /**
     * The in-memory store; {@code unsupportedDatabase} names a DataSource the JDBC store could not
     * use.
     */
    static InMemoryStore create(OnceProperties properties, @Nullable String unsupportedDatabase) {
      OnceProperties.StoreType type = properties.getStore().getType();
      // An explicit choice that cannot be honoured is a misconfiguration, never a silent downgrade.
      if (type == OnceProperties.StoreType.JDBC) {
        throw new InvalidOncePropertyException(
            "once.store.type",
            "jdbc",
            unsupportedDatabase == null
                ? "there is no DataSource bean (or once-store-jdbc is not on the class path)"
                : "the DataSource is "
                    + unsupportedDatabase
                    + ", which once-store-jdbc does not support (PostgreSQL, MariaDB)");
      }
      if (type == OnceProperties.StoreType.REDIS) {
        throw new InvalidOncePropertyException(
            "once.store.type",
            "redis",
            "there is no LettuceConnectionFactory bean (or once-store-redis is not on the class path)");
      }
      if (type != OnceProperties.StoreType.MEMORY) {
        log.warn(
            "{}: idempotency records are kept IN MEMORY, lost on restart and not shared between instances."
                + " Use a PostgreSQL or MariaDB DataSource with once-store-jdbc, or Redis (Lettuce) with"
                + " once-store-redis, define an IdempotencyStore bean, or set once.store.type=memory to accept this.",
            unsupportedDatabase == null
                ? "No IdempotencyStore bean, no DataSource and no Lettuce Redis connection factory"
                : "The DataSource is "
                    + unsupportedDatabase
                    + ", which once-store-jdbc does not support");
      }
      log.info("Once store: in memory, this process only");
      return InMemoryStore.create();
    }
  }
}

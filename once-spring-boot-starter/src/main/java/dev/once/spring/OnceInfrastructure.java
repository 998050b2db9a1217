package dev.once.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * What every kind of application gets from the starter whichever auto-configuration applies (a
 * servlet, a reactive or a non-web application): the properties, the chosen store, encryption,
 * observations, the purger and the health indicator. Imported by each auto-configuration, so the
 * list is written once; Spring registers a configuration imported twice only once.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(OnceProperties.class)
@Import({
  StoreConfigurations.Jdbc.class,
  StoreConfigurations.Redis.class,
  StoreConfigurations.InMemory.class,
  OnceAutoConfiguration.EncryptionConfiguration.class,
  OnceAutoConfiguration.ObservationConfiguration.class,
  OnceAutoConfiguration.PurgeConfiguration.class,
  OnceHealthConfiguration.class
})
class OnceInfrastructure {

  /** The starter is on unless {@code once.enabled=false}. */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.TYPE)
  @Documented
  @ConditionalOnProperty(
      prefix = "once",
      name = "enabled",
      havingValue = "true",
      matchIfMissing = true)
  @interface ConditionalOnOnceEnabled {}
}

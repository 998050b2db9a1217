package dev.once.spring;

import dev.once.micrometer.OnceMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Counts the engine's events and times its store calls in the application's {@link MeterRegistry}
 * (see {@link OnceMetrics} for the meters), when once-micrometer and a registry are present.
 */
@AutoConfiguration(
    afterName = {
      // Boot 3's names, then Boot 4's, as in OnceAutoConfiguration.
      "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
    },
    before = OnceAutoConfiguration.class)
@ConditionalOnClass({MeterRegistry.class, OnceMetrics.class})
@ConditionalOnBean(MeterRegistry.class)
public class OnceMetricsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  OnceMetrics onceMetrics(MeterRegistry registry) {
    return OnceMetrics.of(registry);
  }
}

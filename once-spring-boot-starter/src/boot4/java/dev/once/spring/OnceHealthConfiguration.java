package dev.once.spring;

import dev.once.store.IdempotencyStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code once} health contributor ({@link StoreHealth}) on Boot 4. One copy per Boot line
 * because the health API moved: Boot 4 has it in spring-boot-health ({@code
 * org.springframework.boot.health.contributor}), Boot 3 in spring-boot-actuator (src/boot3/java).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnEnabledHealthIndicator("once")
class OnceHealthConfiguration {

  @Bean
  @ConditionalOnMissingBean(name = "onceHealthIndicator")
  StoreHealthIndicator onceHealthIndicator(IdempotencyStore store) {
    return new StoreHealthIndicator(store);
  }

  static final class StoreHealthIndicator extends AbstractHealthIndicator {
    private final IdempotencyStore store;

    StoreHealthIndicator(IdempotencyStore store) {
      super(StoreHealth.FAILED);
      this.store = store;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
      builder.up().withDetails(StoreHealth.check(store));
    }
  }
}

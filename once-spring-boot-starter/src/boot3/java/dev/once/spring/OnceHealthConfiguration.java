package dev.once.spring;

import dev.once.store.IdempotencyStore;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code once} health contributor ({@link StoreHealth}) on Boot 3. One copy per Boot line
 * because the health API moved: Boot 3 has it in spring-boot-actuator ({@code
 * org.springframework.boot.actuate.health}), Boot 4 in spring-boot-health (src/boot4/java).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
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

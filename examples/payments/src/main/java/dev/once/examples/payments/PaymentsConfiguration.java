package dev.once.examples.payments;

import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Authentication runs before the idempotency filter (order 0): unknown keys never reach the store.
 */
@Configuration(proxyBeanMethods = false)
class PaymentsConfiguration {

  @Bean
  FilterRegistrationBean<ApiKeyFilter> apiKeyFilter(Ledger ledger) {
    FilterRegistrationBean<ApiKeyFilter> registration =
        new FilterRegistrationBean<>(new ApiKeyFilter(ledger));
    registration.addUrlPatterns("/api/*");
    registration.setOrder(-100);
    return registration;
  }
}

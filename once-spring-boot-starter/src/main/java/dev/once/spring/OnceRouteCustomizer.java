package dev.once.spring;

import dev.once.http.RoutePolicy;

/**
 * Changes a route's policy in code after the properties and {@link Idempotent} made it: what
 * configuration cannot say, such as an {@link dev.once.OutcomeClassifier} of the application's own
 * for what is recorded and replayed. Declare it as a bean; every one is applied, in order, to every
 * route, the paths no route matches included (pattern {@code /**}).
 *
 * <pre>{@code
 * @Bean
 * OnceRouteCustomizer quotesAreNeverRecorded() {
 *   return (pattern, policy) -> pattern.startsWith("/api/quotes")
 *       ? policy.toBuilder().classifier(new QuoteOutcomes()).build()
 *       : policy;
 * }
 * }</pre>
 */
@FunctionalInterface
public interface OnceRouteCustomizer {

  /**
   * The policy the route with {@code pattern} should have; {@code policy} unchanged for routes this
   * customizer leaves alone. Never null.
   */
  RoutePolicy customize(String pattern, RoutePolicy policy);
}

package dev.once.http.kit;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The routes every adapter configures for {@link HttpSemanticsContract}, in the names and value
 * types of {@link dev.once.http.RouteOptions}: each adapter maps them through its own configuration
 * path (a builder, YAML, Spring properties), so the kit also checks that mapping. Paths no route
 * matches take the defaults.
 */
public final class KitRoutes {

  /** The tenant header every adapter scopes keys by. */
  public static final String TENANT_HEADER = "Api-Key";

  /** The key header of the {@code /vendor/**} route. */
  public static final String VENDOR_KEY_HEADER = "X-Idempotency-Key";

  private KitRoutes() {}

  /** Pattern to the options that route sets, in the order routes are tried. */
  public static Map<String, Map<String, Object>> all() {
    Map<String, Map<String, Object>> routes = new LinkedHashMap<>();
    routes.put("/required/**", Map.of("key-required", true));
    routes.put("/small/**", Map.of("max-request-bytes", 1024, "max-response-bytes", 4096));
    routes.put(
        "/wait/**",
        Map.of("in-flight", "wait", "max-wait", Duration.ofSeconds(10), "max-waiters-per-key", 64));
    routes.put("/stamped/**", Map.of("excluded-json-pointers", List.of("/sent_at")));
    routes.put("/puts/**", Map.of("methods", List.of("POST", "PUT", "DELETE")));
    routes.put("/open/**", Map.of("failure-mode", "fail-open"));
    routes.put("/vendor/**", Map.of("key-header", VENDOR_KEY_HEADER));
    routes.put("/stripe/**", Map.of("replay", "stripe"));
    routes.put("/success-only/**", Map.of("replay", "success-only"));
    routes.put("/hinted/**", Map.of("in-flight-retry-after", Duration.ofSeconds(2)));
    return routes;
  }
}

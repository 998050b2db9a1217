package dev.once.webflux;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.http.RouteOptions;
import dev.once.http.RoutePolicy;
import dev.once.http.ScopeResolver;
import dev.once.http.kit.Deployment;
import dev.once.http.kit.HttpSemanticsContract;
import dev.once.http.kit.KitRoutes;
import dev.once.http.kit.ReferenceApi;
import dev.once.store.IdempotencyStore;
import java.net.URI;
import java.util.Map;

/**
 * DESIGN §4 through the contract kit: {@link OnceWebFilter} in front of a WebFlux handler on
 * Reactor Netty, with BlockHound watching every non-blocking thread ({@link BlockingCalls}).
 */
class WebFluxSemanticsTest extends HttpSemanticsContract {

  @Override
  protected Deployment deploy(IdempotencyStore store) {
    return WebFluxDeployment.start(store);
  }

  /** The filter built from {@link KitRoutes} with the core builders, on Reactor Netty. */
  record WebFluxDeployment(Once once, WebFluxServer server, ReferenceApi api)
      implements Deployment {

    static WebFluxDeployment start(IdempotencyStore store) {
      Once once = Once.of(store);
      HttpIdempotency.Builder http =
          HttpIdempotency.builder(once).scope(ScopeResolver.header(KitRoutes.TENANT_HEADER));
      for (Map.Entry<String, Map<String, Object>> route : KitRoutes.all().entrySet()) {
        http.route(route.getKey(), RouteOptions.apply(RoutePolicy.DEFAULTS, route.getValue()));
      }
      ReferenceApi api = new ReferenceApi();
      WebFluxServer server =
          WebFluxServer.start(new ReferenceHandler(api), OnceWebFilter.of(http.build()));
      return new WebFluxDeployment(once, server, api);
    }

    @Override
    public URI base() {
      return server.base();
    }

    @Override
    public void close() {
      server.close();
      once.close();
    }
  }
}

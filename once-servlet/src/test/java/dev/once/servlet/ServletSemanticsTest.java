package dev.once.servlet;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.http.RouteOptions;
import dev.once.http.RoutePolicy;
import dev.once.http.kit.Deployment;
import dev.once.http.kit.HttpSemanticsContract;
import dev.once.http.kit.KitRoutes;
import dev.once.http.kit.ReferenceApi;
import dev.once.store.IdempotencyStore;
import jakarta.servlet.DispatcherType;
import java.net.URI;
import java.util.EnumSet;
import java.util.Map;

/** DESIGN §4 through the contract kit: {@link OnceFilter} in front of a servlet on Jetty. */
class ServletSemanticsTest extends HttpSemanticsContract {

  @Override
  protected Deployment deploy(IdempotencyStore store) throws Exception {
    return ServletDeployment.start(store);
  }

  /** The filter built from {@link KitRoutes} with the core builders, on Jetty. */
  record ServletDeployment(Once once, JettyServer server, ReferenceApi api) implements Deployment {

    static ServletDeployment start(IdempotencyStore store) throws Exception {
      Once once = Once.of(store);
      HttpIdempotency.Builder http = HttpIdempotency.builder(once);
      for (Map.Entry<String, Map<String, Object>> route : KitRoutes.all().entrySet()) {
        http.route(route.getKey(), RouteOptions.apply(RoutePolicy.DEFAULTS, route.getValue()));
      }
      ReferenceApi api = new ReferenceApi();
      JettyServer server =
          JettyServer.start(
              OnceFilter.builder(http.build()).build(),
              "/",
              new ReferenceServlet(api),
              EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
      return new ServletDeployment(once, server, api);
    }

    @Override
    public URI base() {
      return server.base();
    }

    @Override
    public void close() throws Exception {
      server.close();
      once.close();
    }
  }
}

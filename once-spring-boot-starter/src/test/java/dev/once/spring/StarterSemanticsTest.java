package dev.once.spring;

import dev.once.http.Durations;
import dev.once.http.RouteOption;
import dev.once.http.RouteOptions;
import dev.once.http.kit.Deployment;
import dev.once.http.kit.HttpSemanticsContract;
import dev.once.http.kit.KitRoutes;
import dev.once.http.kit.ReferenceApi;
import dev.once.spring.kit.KitApplication;
import dev.once.store.IdempotencyStore;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * DESIGN §4 through the contract kit: a Spring Boot application on Tomcat, guarded by the starter,
 * its routes given as the {@code once.routes[n].*} properties a user would write for {@link
 * KitRoutes}.
 */
class StarterSemanticsTest extends HttpSemanticsContract {

  @Override
  protected Deployment deploy(IdempotencyStore store) {
    return SpringDeployment.start(store);
  }

  /** {@link KitRoutes} as properties, each value in Spring's own notation. */
  static List<String> properties() {
    List<String> props =
        new ArrayList<>(
            List.of(
                "server.port=0",
                "server.address=127.0.0.1",
                "once.scope.header=" + KitRoutes.TENANT_HEADER,
                "spring.main.banner-mode=off"));
    int i = 0;
    for (Map.Entry<String, Map<String, Object>> route : KitRoutes.all().entrySet()) {
      String prefix = "once.routes[" + i++ + "].";
      props.add(prefix + "pattern=" + route.getKey());
      route.getValue().forEach((name, value) -> props.add(prefix + name + "=" + text(name, value)));
    }
    return props;
  }

  private static String text(String option, Object value) {
    if (value instanceof Duration d) {
      return Durations.format(d);
    } else if (value instanceof List<?> list) {
      return String.join(",", list.stream().map(String::valueOf).toList());
    } else if (RouteOptions.named(option).type() == RouteOption.Type.BYTES) {
      return value + "B";
    }
    return String.valueOf(value);
  }

  record SpringDeployment(ConfigurableApplicationContext context, ReferenceApi api)
      implements Deployment {

    static SpringDeployment start(IdempotencyStore store) {
      ReferenceApi api = new ReferenceApi();
      ConfigurableApplicationContext context =
          new SpringApplicationBuilder(KitApplication.class)
              .properties(properties().toArray(String[]::new))
              .initializers(
                  c -> {
                    c.getBeanFactory().registerSingleton("kitStore", store);
                    c.getBeanFactory().registerSingleton("referenceApi", api);
                  })
              .run();
      return new SpringDeployment(context, api);
    }

    @Override
    public URI base() {
      int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
      return URI.create("http://127.0.0.1:" + port);
    }

    @Override
    public void close() {
      context.close();
    }
  }
}

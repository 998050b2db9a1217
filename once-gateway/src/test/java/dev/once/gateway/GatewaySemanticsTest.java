package dev.once.gateway;

import dev.once.http.Durations;
import dev.once.http.kit.Deployment;
import dev.once.http.kit.HttpSemanticsContract;
import dev.once.http.kit.KitRoutes;
import dev.once.http.kit.ReferenceApi;
import dev.once.store.IdempotencyStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * DESIGN §4 through the contract kit: the gateway, configured by the YAML a user would write for
 * {@link KitRoutes}, in front of the {@link ReferenceApi} as its upstream.
 */
class GatewaySemanticsTest extends HttpSemanticsContract {

  @Override
  protected Deployment deploy(IdempotencyStore store) throws Exception {
    return GatewayDeployment.start(store);
  }

  /** The routes as YAML, each value in the gateway's own notation. */
  static String yaml() {
    StringBuilder y = new StringBuilder("access-log: false\nroutes:\n");
    for (Map.Entry<String, Map<String, Object>> route : KitRoutes.all().entrySet()) {
      y.append("  - pattern: ").append(route.getKey()).append('\n');
      route
          .getValue()
          .forEach(
              (name, value) ->
                  y.append("    ").append(name).append(": ").append(text(value)).append('\n'));
    }
    return y.toString();
  }

  private static String text(Object value) {
    if (value instanceof Duration d) {
      return Durations.format(d);
    } else if (value instanceof List<?> list) {
      return list.stream().map(String::valueOf).collect(Collectors.joining(", ", "[", "]"));
    }
    return String.valueOf(value);
  }

  record GatewayDeployment(Gateway gateway, ReferenceUpstream upstream, Path dir)
      implements Deployment {

    static GatewayDeployment start(IdempotencyStore store) throws Exception {
      ReferenceUpstream upstream = new ReferenceUpstream();
      Path dir = Files.createTempDirectory("once-gateway-kit-");
      try {
        Path config = dir.resolve("gateway.yaml");
        Files.writeString(config, yaml());
        List<String> args = new ArrayList<>(TestGateway.LOOPBACK);
        args.addAll(
            List.of(
                "--config",
                config.toString(),
                "--upstream",
                upstream.url(),
                "--tenant-header",
                KitRoutes.TENANT_HEADER));
        GatewayConfig c =
            Cli.configure(Cli.parse(args.toArray(String[]::new)), TestCore.env()).build();
        return new GatewayDeployment(
            Gateway.start(c, new OpenStore(store, () -> {})), upstream, dir);
      } catch (Exception | Error e) {
        upstream.close();
        TestGateway.delete(dir);
        throw e;
      }
    }

    @Override
    public java.net.URI base() {
      return gateway.uri();
    }

    @Override
    public ReferenceApi api() {
      return upstream.api;
    }

    @Override
    public void close() {
      gateway.close();
      upstream.close();
      TestGateway.delete(dir);
    }
  }
}

package dev.once.gateway;

import dev.once.http.RoutePolicy;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * {@code --demo}: the non-idempotent {@link DemoUpstream} on a free loopback port, the gateway in
 * front of it on the embedded store, and curl lines that show each rule of DESIGN §4.
 */
final class Demo implements AutoCloseable {

  static final String KEY_HEADER_LINE =
      "-H 'Api-Key: merchant-42' -H 'Content-Type: application/json'";

  private final DemoUpstream upstream;
  private final Gateway gateway;
  private final @Nullable Path tempDataDir;

  private Demo(DemoUpstream upstream, Gateway gateway, @Nullable Path tempDataDir) {
    this.upstream = upstream;
    this.gateway = gateway;
    this.tempDataDir = tempDataDir;
  }

  /**
   * Starts the demo. Options the user set win; otherwise it listens on loopback, on 8080 if free,
   * keeps its records in a fresh temporary directory, and guards {@code POST /charges}.
   */
  static Demo start(
      Cli.Parsed parsed, GatewayConfig.Builder builder, java.util.Map<String, String> env)
      throws Exception {
    DemoUpstream upstream = DemoUpstream.start(0);
    Path temp = null;
    try {
      builder.upstream("http://127.0.0.1:" + upstream.port());
      if (!isSet("bind", parsed, env)) {
        builder.bind("127.0.0.1");
      }
      if (!isSet("port", parsed, env)) {
        builder.port(isFree(8080) ? 8080 : 0);
      }
      if (!isSet("management-port", parsed, env)) {
        builder.managementPort(0);
      }
      if (!isSet("data-dir", parsed, env)) {
        temp = Files.createTempDirectory("once-demo-");
        builder.dataDir(temp);
      }
      GatewayConfig config = builder.build();
      if (config.routes().isEmpty()) {
        builder.route("/charges", RoutePolicy.builder().methods("POST").keyRequired(true).build());
        config = builder.build();
      }
      return new Demo(upstream, Gateway.start(config), temp);
    } catch (Exception | Error e) {
      upstream.close();
      deleteQuietly(temp);
      throw e;
    }
  }

  static int run(
      Cli.Parsed parsed,
      GatewayConfig.Builder builder,
      PrintStream out,
      PrintStream err,
      boolean block)
      throws Exception {
    Demo demo = start(parsed, builder, System.getenv());
    out.print(demo.instructions());
    out.flush();
    if (block) {
      Runtime.getRuntime().addShutdownHook(new Thread(demo::close, "once-demo-shutdown"));
      demo.gateway.join();
    } else {
      demo.close();
    }
    return 0;
  }

  Gateway gateway() {
    return gateway;
  }

  DemoUpstream upstream() {
    return upstream;
  }

  String instructions() {
    String g = gateway.uri().toString();
    String u = "http://127.0.0.1:" + upstream.port();
    String m = "http://127.0.0.1:" + gateway.managementPort();
    String post =
        "curl -i -X POST " + g + "/charges -H 'Idempotency-Key: demo-1' " + KEY_HEADER_LINE;
    String slow =
        "curl -s -X POST '"
            + g
            + "/charges?delay=5000' -H 'Idempotency-Key: demo-2' "
            + KEY_HEADER_LINE
            + " -d '{\"amount\":500,\"currency\":\"EUR\"}'";
    return "\nOnce gateway demo\n"
        + "  upstream (NOT idempotent: every POST /charges creates a new charge): "
        + u
        + "\n"
        + "  gateway in front of it, POST /charges guarded:                      "
        + g
        + "\n"
        + "  store: embedded, in "
        + (tempDataDir != null ? tempDataDir : "the configured data dir")
        + "\n"
        + "  health and metrics: "
        + m
        + "/health  "
        + m
        + "/metrics\n\n"
        + "Try these, in order:\n\n"
        + "1. The first request runs the upstream and creates charge ch_1:\n"
        + "   "
        + post
        + " -d '{\"amount\":1000,\"currency\":\"EUR\"}'\n\n"
        + "2. A retry (same key, same body) replays the first response (Idempotent-Replayed: true); no new charge:\n"
        + "   "
        + post
        + " -d '{\"amount\":1000,\"currency\":\"EUR\"}'\n\n"
        + "3. The same key with a different body is refused: 422 idempotency-key-reused:\n"
        + "   "
        + post
        + " -d '{\"amount\":9999,\"currency\":\"EUR\"}'\n\n"
        + "4. A duplicate while the first is still running gets 409 idempotency-request-in-flight with Retry-After:\n"
        + "   "
        + slow
        + " & sleep 1; "
        + slow.replace("curl -s", "curl -i")
        + "; wait\n\n"
        + "5. The ledger: one charge per key, however often you retried:\n"
        + "   curl -s "
        + g
        + "/ledger\n\n"
        + "   Without the gateway, the same retry makes a duplicate charge:\n"
        + "   curl -s -X POST "
        + u
        + "/charges -H 'Idempotency-Key: demo-1' "
        + KEY_HEADER_LINE
        + " -d '{\"amount\":1000,\"currency\":\"EUR\"}'; curl -s "
        + u
        + "/ledger\n\n"
        + "Press Ctrl+C to stop.\n";
  }

  @Override
  public void close() {
    gateway.close();
    upstream.close();
    deleteQuietly(tempDataDir);
  }

  private static boolean isSet(
      String option, Cli.Parsed parsed, java.util.Map<String, String> env) {
    return parsed.flags().containsKey(option)
        || env.containsKey("ONCE_" + option.toUpperCase(java.util.Locale.ROOT).replace('-', '_'))
        || parsed.configFile() != null
        || env.containsKey(Cli.CONFIG_ENV);
  }

  private static boolean isFree(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void deleteQuietly(@Nullable Path dir) {
    if (dir == null) {
      return;
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // A temporary directory left behind is harmless.
    }
  }
}

package dev.once.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A gateway started in-process on free ports in front of a {@link FakeUpstream}, configured through
 * the same YAML file and flags a user would write, with a client aimed at it.
 */
final class TestGateway implements AutoCloseable {

  /** Routes that exercise every policy; the default route covers POST and PATCH, key optional. */
  static final String ROUTES =
      """
      upstream-timeout: 1500ms
      access-log: false
      defaults:
        lease: 30s
      routes:
        - pattern: /required/**
          key-required: true
        - pattern: /small/**
          max-request-bytes: 1KiB
          max-response-bytes: 4KiB
        - pattern: /wait/**
          in-flight: wait
          max-wait: 10s
          max-waiters-per-key: 64
        - pattern: /short-lease/**
          lease: 1s
        - pattern: /stamped/**
          excluded-json-pointers: [/sent_at]
        - pattern: /open/**
          failure-mode: fail-open
        - pattern: /puts/**
          methods: [POST, PUT, DELETE]
        - pattern: /large/**
          max-request-bytes: 32MiB
        - pattern: /vendor/**
          key-header: X-Idempotency-Key
      """;

  final FakeUpstream upstream;
  final Gateway gateway;
  final Client client;
  final Path dir;

  private TestGateway(FakeUpstream upstream, Gateway gateway, Path dir) {
    this.upstream = upstream;
    this.gateway = gateway;
    this.dir = dir;
    this.client = new Client(gateway.uri());
  }

  /** With {@link #ROUTES} on the embedded store, and any extra flags. */
  static TestGateway start(String... flags) throws Exception {
    return start(null, flags);
  }

  /** Over a store the test opened (e.g. one that is down), or the configured one if null. */
  static TestGateway start(OpenStore store, String... flags) throws Exception {
    FakeUpstream upstream = new FakeUpstream();
    Path dir = Files.createTempDirectory("once-gateway-test-");
    try {
      GatewayConfig config = config(dir, upstream.url(), flags);
      Gateway gateway = store == null ? Gateway.start(config) : Gateway.start(config, store);
      return new TestGateway(upstream, gateway, dir);
    } catch (Exception | Error e) {
      upstream.close();
      delete(dir);
      throw e;
    }
  }

  static GatewayConfig config(Path dir, String upstream, String... flags) throws IOException {
    Path yaml = dir.resolve("gateway.yaml");
    Files.writeString(yaml, ROUTES);
    List<String> args =
        args(upstream, dir, "--config", yaml.toString(), "--durability", "process-crash");
    args.addAll(Arrays.asList(flags));
    return Cli.configure(Cli.parse(args.toArray(String[]::new)), TestCore.env()).build();
  }

  /** How every gateway of the tests listens: on loopback, at ports the system picks. */
  static final List<String> LOOPBACK =
      List.of("--bind", "127.0.0.1", "--port", "0", "--management-port", "0");

  /**
   * The arguments of a gateway of the tests, in this process or a child one: {@link #LOOPBACK},
   * {@code upstream}, its data in {@code dir}, then {@code more}.
   */
  static List<String> args(String upstream, Path dir, String... more) {
    List<String> args = new ArrayList<>(LOOPBACK);
    args.addAll(List.of("--upstream", upstream, "--data-dir", dir.resolve("data").toString()));
    args.addAll(List.of(more));
    return args;
  }

  Client management() {
    return new Client(java.net.URI.create("http://127.0.0.1:" + gateway.managementPort()));
  }

  @Override
  public void close() {
    gateway.close();
    upstream.close();
    delete(dir);
  }

  static void delete(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temporary directory left behind is harmless
    }
  }
}

package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.InFlightPolicy;
import dev.once.http.Durations;
import dev.once.http.RoutePolicy;
import dev.once.http.Sizes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line, the environment and the YAML file: precedence, and a clear message for every
 * mistake.
 */
class CommandLineTest {

  @TempDir Path dir;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(Map<String, String> env, String... args) {
    return Gateway.run(
        args,
        env,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        false);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private static GatewayConfig config(Map<String, String> env, String... args) {
    return Cli.configure(Cli.parse(args), env).build();
  }

  @Test
  void helpListsEveryOptionWithItsFlagEnvironmentVariableAndDefault() {
    assertThat(run(Map.of(), "--help")).isZero();

    String help = out.toString(StandardCharsets.UTF_8);
    for (Option o : Options.ALL) {
      assertThat(help).contains(o.flag()).contains(o.env()).contains(o.defaultValue());
    }
    assertThat(help).contains("--config").contains("--demo");
  }

  /**
   * The default {@code --help} shows for an option (and the docs, {@link DocsTest}) is the one the
   * builder applies: setting it changes nothing. Defaults shown in words ("(off)", "(required)")
   * are not values and are skipped. Package-private accessors count too: the proxy's core is one.
   */
  @Test
  void theDefaultHelpShowsIsTheOneTheBuilderApplies() throws Exception {
    GatewayConfig unset = GatewayConfig.builder().upstream("http://127.0.0.1:3000").build();
    int checked = 0;
    for (Option o : Options.ALL) {
      if (o.defaultValue().contains("(") || o.defaultValue().contains(" ")) {
        continue;
      }
      GatewayConfig.Builder b = GatewayConfig.builder().upstream("http://127.0.0.1:3000");
      o.apply(b, o.defaultValue(), o.flag());
      GatewayConfig set = b.build();
      for (java.lang.reflect.Method accessor : GatewayConfig.class.getDeclaredMethods()) {
        if (accessor.getParameterCount() == 0
            && !java.lang.reflect.Modifier.isPrivate(accessor.getModifiers())
            && !accessor.isSynthetic()
            && !java.lang.reflect.Modifier.isStatic(accessor.getModifiers())
            && !accessor.getName().equals("toString")) {
          assertThat(comparable(accessor.invoke(set)))
              .as("%s after %s %s", accessor.getName(), o.flag(), o.defaultValue())
              .isEqualTo(comparable(accessor.invoke(unset)));
        }
      }
      checked++;
    }
    assertThat(checked).as("options with a value as default").isGreaterThan(20);
  }

  /** Paths compare by what they name ("./data" is "data"); the rest as they are. */
  private static Object comparable(Object value) {
    return value instanceof Path p ? p.toAbsolutePath().normalize() : String.valueOf(value);
  }

  /**
   * The store threads follow the store unless set: one a core where no call holds a thread (the
   * embedded store), the engine's default for a blocking store; a number given is kept on both.
   */
  @Test
  void storeThreadsFollowTheStoreUnlessSet() {
    int cores = Runtime.getRuntime().availableProcessors();
    assertThat(config(Map.of(), "--upstream", "http://h").storeThreads()).isEqualTo(cores);
    assertThat(
            config(Map.of(), "--upstream", "http://h", "--store", "postgres://u@h/db")
                .storeThreads())
        .isEqualTo(dev.once.Once.Builder.DEFAULT_STORE_THREADS);
    assertThat(config(Map.of(), "--upstream", "http://h", "--store-threads", "3").storeThreads())
        .isEqualTo(3);
    assertThat(
            config(
                    Map.of("ONCE_STORE_THREADS", "5"),
                    "--upstream",
                    "http://h",
                    "--store",
                    "postgres://u@h/db")
                .storeThreads())
        .isEqualTo(5);
  }

  @Test
  void aPortOutOfRangeIsRefusedNamingTheFlag() {
    assertThat(run(Map.of(), "--upstream", "http://127.0.0.1:1", "--port", "70000"))
        .isEqualTo(Gateway.EXIT_CONFIG);

    assertThat(err()).contains("--port").contains("0-65535").contains("70000");
  }

  @Test
  void limitsOutOfRangeAreRefusedNamingTheFlagAndTheRange() {
    assertThat(run(Map.of(), "--upstream", "http://127.0.0.1:1", "--max-header-bytes", "128KiB"))
        .isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(run(Map.of(), "--upstream", "http://127.0.0.1:1", "--store-threads", "0"))
        .isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(run(Map.of(), "--upstream", "http://127.0.0.1:1", "--request-body-timeout", "10ms"))
        .isEqualTo(Gateway.EXIT_CONFIG);

    assertThat(err())
        .contains("--max-header-bytes: max-header-bytes must be between 1KiB and 64KiB, was 128KiB")
        .contains(
            "--store-threads: store-threads must be 1-"
                + dev.once.Once.Builder.MAX_STORE_THREADS
                + ", was 0")
        .contains("--request-body-timeout")
        .contains("10ms");
  }

  @Test
  void aPortThatIsNotANumberIsRefusedNamingTheEnvironmentVariable() {
    assertThat(run(Map.of("ONCE_PORT", "eighty"), "--upstream", "http://127.0.0.1:1"))
        .isEqualTo(Gateway.EXIT_CONFIG);

    assertThat(err()).contains("ONCE_PORT").contains("eighty");
  }

  @Test
  void anUpstreamThatIsNotAnHttpUrlIsRefused() {
    assertThat(run(Map.of(), "--upstream", "ftp://example")).isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(err()).contains("--upstream").contains("http://");
  }

  @Test
  void aMissingUpstreamIsRefusedWithTheWaysToSetIt() {
    assertThat(run(Map.of())).isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(err()).contains("--upstream").contains("ONCE_UPSTREAM");
  }

  @Test
  void anUnknownOptionIsRefused() {
    assertThat(run(Map.of(), "--upstream", "http://127.0.0.1:1", "--prot", "8080"))
        .isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(err()).contains("unknown option --prot").contains("--help");
  }

  @Test
  void aFlagWithoutItsValueIsRefused() {
    assertThat(run(Map.of(), "--upstream")).isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(err()).contains("--upstream needs a value");
  }

  @Test
  void storeUrlsAreValidatedWithTheFormsThatWork() {
    assertThatThrownBy(() -> config(Map.of(), "--upstream", "http://h", "--store", "mysql://x"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--store")
        .hasMessageContaining("postgres://");
    assertThatThrownBy(
            () -> config(Map.of(), "--upstream", "http://h", "--store", "postgres://host/db"))
        .hasMessageContaining("no user");
    assertThatThrownBy(
            () -> config(Map.of(), "--upstream", "http://h", "--store", "redis-cluster://a:1,b"))
        .hasMessageContaining("host:port");
  }

  @Test
  void aStorePasswordNeverAppearsInMessagesOrTheConfigDescription() {
    assertThatThrownBy(
            () ->
                config(Map.of(), "--upstream", "http://h", "--store", "postgres://u:s3cret@h/a/b"))
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"));
    GatewayConfig ok =
        config(Map.of(), "--upstream", "http://h", "--store", "postgres://u:s3cret@h:5433/db");
    assertThat(ok.toString()).doesNotContain("s3cret").contains("postgres://u:***@h:5433/db");
    assertThat(((StoreUrl.Postgres) ok.store()).jdbcUrl()).isEqualTo("jdbc:postgresql://h:5433/db");
  }

  @Test
  void flagsBeatTheEnvironmentWhichBeatsTheFileWhichBeatsTheDefaults() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(
        yaml,
        "upstream: http://from-file\nport: 1111\nmanagement-port: 2222\ntenant-header: X-File\n");

    GatewayConfig c =
        config(
            Map.of("ONCE_PORT", "3333", "ONCE_MANAGEMENT_PORT", "4444"),
            "--config",
            yaml.toString(),
            "--port",
            "5555");

    assertThat(c.port()).isEqualTo(5555);
    assertThat(c.managementPort()).isEqualTo(4444);
    assertThat(c.tenantHeader()).isEqualTo("X-File");
    assertThat(c.upstream().toString()).isEqualTo("http://from-file");
    assertThat(c.upstreamTimeout()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void theConfigFileCanComeFromTheEnvironment() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(yaml, "upstream: http://from-file\n");

    assertThat(config(Map.of("ONCE_CONFIG", yaml.toString())).upstream().toString())
        .isEqualTo("http://from-file");
  }

  @Test
  void routesInheritTheDefaultsSectionAndMapOntoThePolicyBuilders() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(
        yaml,
        """
        upstream: http://h
        defaults:
          lease: 10s
          ttl: 48h
        routes:
          - pattern: /charges
            methods: [POST, PUT]
            key-required: true
            in-flight: wait
            max-wait: 3s
            max-waiters-per-key: 4
            failure-mode: fail-open
            max-request-bytes: 64KiB
            max-response-bytes: 1MiB
            excluded-json-pointers: [/sent_at, /trace/id]
            replay-header-denylist: [X-Request-Id]
        """);

    GatewayConfig c = config(Map.of(), "--config", yaml.toString());

    RoutePolicy p = c.routes().get(0).policy();
    assertThat(c.routes().get(0).pattern()).isEqualTo("/charges");
    assertThat(p.methods()).containsExactlyInAnyOrder("POST", "PUT");
    assertThat(p.keyRequired()).isTrue();
    assertThat(p.execution().lease()).isEqualTo(Duration.ofSeconds(10));
    assertThat(p.execution().ttl()).isEqualTo(Duration.ofHours(48));
    assertThat(p.execution().inFlight()).isEqualTo(InFlightPolicy.waitUpTo(Duration.ofSeconds(3)));
    assertThat(p.maxWaitersPerKey()).isEqualTo(4);
    assertThat(p.execution().failureMode()).isEqualTo(dev.once.FailureMode.FAIL_OPEN);
    assertThat(p.maxRequestBytes()).isEqualTo(64 * 1024);
    assertThat(p.execution().maxResultBytes()).isEqualTo(1 << 20);
    assertThat(p.excludedJsonPointers()).containsExactlyInAnyOrder("/sent_at", "/trace/id");
    assertThat(p.replayHeaderDenylist()).containsExactly("x-request-id");
    assertThat(c.defaults().execution().lease()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void aMistakeInARouteNamesTheFileTheRouteAndTheKey() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(
        yaml, "upstream: http://h\nroutes:\n  - pattern: /a\n  - pattern: /b\n    lease: soon\n");

    assertThatThrownBy(() -> config(Map.of(), "--config", yaml.toString()))
        .hasMessageContaining("g.yaml")
        .hasMessageContaining("routes[1].lease")
        .hasMessageContaining("soon");
  }

  @Test
  void aTtlShorterThanTheLeaseIsRefusedByThePolicyBuilder() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(
        yaml, "upstream: http://h\nroutes:\n  - pattern: /a\n    lease: 1h\n    ttl: 1m\n");

    assertThatThrownBy(() -> config(Map.of(), "--config", yaml.toString()))
        .hasMessageContaining("routes[0]");
  }

  @Test
  void unknownKeysInTheFileAreRefused() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(yaml, "upstream: http://h\nrouts: []\n");
    assertThatThrownBy(() -> config(Map.of(), "--config", yaml.toString()))
        .hasMessageContaining("unknown key 'routs'");

    Files.writeString(yaml, "upstream: http://h\nroutes:\n  - pattern: /a\n    leese: 1s\n");
    assertThatThrownBy(() -> config(Map.of(), "--config", yaml.toString()))
        .hasMessageContaining("unknown key 'leese'");
  }

  @Test
  void aFileThatIsNotYamlOrIsMissingIsRefusedClearly() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(yaml, "upstream: [unclosed\n");

    assertThat(run(Map.of(), "--config", yaml.toString())).isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(err()).contains("not valid YAML");
    assertThat(run(Map.of(), "--config", dir.resolve("nope.yaml").toString()))
        .isEqualTo(Gateway.EXIT_CONFIG);
    assertThat(err()).contains("cannot read it");
  }

  @Test
  void theYamlFileCannotInstantiateClasses() throws Exception {
    Path yaml = dir.resolve("g.yaml");
    Files.writeString(yaml, "upstream: !!java.io.File [\"/tmp\"]\n");

    assertThatThrownBy(() -> config(Map.of(), "--config", yaml.toString()))
        .hasMessageContaining("not valid YAML");
  }

  @Test
  void aStoreThatCannotBeReachedStopsTheStartWithExitStatusOne() {
    assertThat(
            run(
                Map.of(),
                "--upstream",
                "http://127.0.0.1:1",
                "--port",
                "0",
                "--management-port",
                "0",
                "--store",
                "redis://127.0.0.1:1"))
        .isEqualTo(Gateway.EXIT_START);

    assertThat(err()).contains("cannot start").contains("Redis");
  }

  @Test
  void aRedisStoreThatIsDownIsReportedInOneLineNamingItsAddressWithoutThePassword()
      throws Exception {
    int port = closedPort();

    int status =
        run(
            Map.of(),
            "--upstream",
            "http://127.0.0.1:1",
            "--port",
            "0",
            "--management-port",
            "0",
            "--store",
            "redis://:s3cret-pw@127.0.0.1:" + port);

    assertThat(status).isEqualTo(Gateway.EXIT_START);
    assertThat(err().strip())
        .startsWith(
            "once-gateway: cannot start: the Redis store at 127.0.0.1:"
                + port
                + " is unreachable (connection refused); start it or set --store")
        .doesNotContain("\n")
        .doesNotContain("s3cret-pw");
  }

  @Test
  void aPostgresStoreThatIsDownIsReportedInOneLineNamingItsAddressWithoutThePassword()
      throws Exception {
    int port = closedPort();

    int status =
        run(
            Map.of(),
            "--upstream",
            "http://127.0.0.1:1",
            "--port",
            "0",
            "--management-port",
            "0",
            "--store",
            "postgres://postgres:s3cret-pw@127.0.0.1:" + port + "/test");

    assertThat(status).isEqualTo(Gateway.EXIT_START);
    assertThat(err().strip())
        .startsWith(
            "once-gateway: cannot start: the PostgreSQL store at 127.0.0.1:"
                + port
                + "/test is unreachable (connection refused); start it or set --store")
        .doesNotContain("\n")
        .doesNotContain("s3cret-pw");
  }

  @Test
  void theStoreThatWasPickedIsNamedInOneInfoLine() throws Exception {
    GatewayConfig config =
        config(
            Map.of(),
            "--upstream",
            "http://127.0.0.1:1",
            "--port",
            "0",
            "--management-port",
            "0",
            "--data-dir",
            dir.toString(),
            "--store-table",
            "orders_once");
    try (RecordingOutput output = new RecordingOutput();
        Gateway gateway = Gateway.start(config)) {
      assertThat(output.text())
          .containsOnlyOnce(
              "Once store: embedded at " + dir.toAbsolutePath() + ", table orders_once");
    }
  }

  @Test
  void keysWithoutATenantAreWarnedAboutUnlessTheTenantIsRequired() throws Exception {
    String warning = "keyed requests without the Api-Key header share one key space";
    for (boolean required : new boolean[] {false, true}) {
      GatewayConfig config =
          config(
              Map.of(),
              "--upstream",
              "http://127.0.0.1:1",
              "--port",
              "0",
              "--management-port",
              "0",
              "--data-dir",
              dir.resolve("tenant-" + required).toString(),
              "--require-tenant",
              Boolean.toString(required));
      try (RecordingOutput output = new RecordingOutput();
          Gateway gateway = Gateway.start(config)) {
        if (required) {
          assertThat(output.text()).doesNotContain(warning);
        } else {
          assertThat(output.text()).containsOnlyOnce(warning);
        }
      }
    }
  }

  /** A loopback port nothing listens on: bound for a moment to find it, then closed. */
  private static int closedPort() throws java.io.IOException {
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void anAdminTokenThatIsTooShortIsRefusedWithoutEchoingIt() {
    assertThat(run(Map.of("ONCE_ADMIN_TOKEN", "hunter2"), "--upstream", "http://h"))
        .isEqualTo(Gateway.EXIT_CONFIG);

    assertThat(err()).contains("ONCE_ADMIN_TOKEN").contains("16").doesNotContain("hunter2");
  }

  @Test
  void durationsAndSizesAcceptTheUsualSpellings() {
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("PT2M")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Durations.parse("7d")).isEqualTo(Duration.ofDays(7));
    assertThat(Sizes.parse("4MiB")).isEqualTo(4 << 20);
    assertThat(Sizes.parse("1024")).isEqualTo(1024);
    assertThatThrownBy(() -> Sizes.parse("4MB")).hasMessageContaining("KiB");
  }
}

package dev.once.gateway;

import dev.once.Once;
import dev.once.OnceListener;
import dev.once.http.Durations;
import dev.once.http.HttpIdempotency;
import dev.once.http.ScopeResolver;
import dev.once.store.EncryptingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.StoreUnavailableException;
import dev.once.store.jdbc.Purger;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.util.ResourceLeakDetector;
import java.io.PrintStream;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.server.Server;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Once gateway: a non-blocking reverse proxy (Jetty 12 core handlers and Jetty's asynchronous
 * {@code HttpClient}) that applies the idempotency semantics of {@link HttpIdempotency} to every
 * request before it reaches the upstream. See {@link ProxyHandler} for the path of one request.
 *
 * <pre>{@code
 * try (Gateway gateway = Gateway.start(GatewayConfig.builder().upstream("http://127.0.0.1:3000").build())) {
 *   ... gateway.uri() ...
 * }
 * }</pre>
 *
 * <p>From the command line: {@code java -jar once-gateway.jar --upstream URL}, or {@code --demo};
 * {@code --help} lists every option. See {@code docs/gateway.md}.
 */
public final class Gateway implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Gateway.class);

  /** Exit status for a configuration the gateway refuses. */
  static final int EXIT_CONFIG = 2;

  /** Exit status for a gateway that could not start (store unreachable, port taken). */
  static final int EXIT_START = 1;

  private final GatewayConfig config;
  private final OpenStore store;
  private final Once once;
  private final PrometheusMeterRegistry registry;
  private final Purger purger;
  private final AutoCloseable upstream;
  private final GatewayServer server;
  private final AtomicBoolean closed = new AtomicBoolean();

  private Gateway(
      GatewayConfig config,
      OpenStore store,
      Once once,
      PrometheusMeterRegistry registry,
      Purger purger,
      AutoCloseable upstream,
      GatewayServer server) {
    this.config = config;
    this.store = store;
    this.once = once;
    this.registry = registry;
    this.purger = purger;
    this.upstream = upstream;
    this.server = server;
  }

  /**
   * Opens the store and starts serving; returns once both ports accept connections.
   *
   * @throws dev.once.store.StoreUnavailableException if the store cannot be opened
   * @throws Exception if a port cannot be bound
   */
  public static Gateway start(GatewayConfig config) throws Exception {
    return start(config, OpenStore.open(config));
  }

  /** Starts over a store opened by the caller; the gateway closes it. */
  static Gateway start(GatewayConfig config, OpenStore store) throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Once once = null;
    Purger purger = null;
    AutoCloseable upstream = null;
    GatewayServer server = null;
    try {
      IdempotencyStore records =
          config.encryptionKeys() == null
              ? store.store()
              : EncryptingStore.of(store.store(), config.encryptionKeys());
      // One listener, so every meter is registered once and counts the engine's and the proxy's
      // events.
      OnceListener listener = Metrics.listener(registry);
      once =
          Once.builder(records)
              .defaults(config.defaults().execution())
              .listener(listener)
              // The blocking stores' calls run here (a Redis store needs no thread); wait-mode
              // duplicates hold none.
              .storeThreads(config.storeThreads())
              .build();
      HttpIdempotency http = idempotency(config, once);
      Purger.Builder purging = Purger.builder(records).interval(config.purgeInterval());
      purger = config.store().expiresRecordsItself() ? purging.build() : purging.start();
      AccessLines accessLines = config.accessLog() ? AccessLines.toStandardOutput() : null;
      if (accessLines != null) {
        Metrics.bindAccessLines(registry, accessLines);
      }
      Core core = core(config, GatewayServer.proxyLog(registry, accessLines), registry);
      upstream = core.close();
      server = GatewayServer.create(config, core.port(), accessLines, records, purger, registry);
      BufferBudget budget =
          new BufferBudget(config.maxBufferedBytes(), config.maxBufferedBytesPerClient());
      Metrics.bindBudget(registry, budget);
      ProxyHandler proxy =
          new ProxyHandler(
              http,
              config.idempotency(),
              core.upstream(),
              budget,
              config.requestBodyTimeout(),
              config.forwarding());
      server.start(proxy);
    } catch (Exception | Error e) {
      if (server != null) {
        server.stop(e);
      }
      closeQuietly(upstream, e);
      closeQuietly(purger, e);
      closeQuietly(once, e);
      closeQuietly(store, e);
      registry.close();
      throw e;
    }
    Gateway gateway = new Gateway(config, store, once, registry, purger, upstream, server);
    log.info(
        "once-gateway started: proxy {} ({} core) -> {}, management http://{}:{} (/health, /metrics{}), store {}{}",
        gateway.uri(),
        config.core().name().toLowerCase(java.util.Locale.ROOT),
        config.upstream(),
        config.bind(),
        gateway.managementPort(),
        config.adminToken() == null ? "" : ", /admin",
        config.store(),
        config.store() instanceof StoreUrl.Embedded
            ? " in " + config.dataDir().toAbsolutePath()
            : "");
    return gateway;
  }

  /** The proxy port and the upstream client of one core, and what stops the client. */
  private record Core(ProxyPort port, ProxyHandler.Forwarder upstream, AutoCloseable close) {}

  private static Core core(GatewayConfig config, ProxyLog served, MeterRegistry registry)
      throws Exception {
    return switch (config.core()) {
      case JETTY -> {
        JettyPort port = new JettyPort(config, served, registry);
        JettyUpstream upstream = JettyUpstream.start(config, port.selectors());
        yield new Core(port, upstream, upstream);
      }
      case NETTY -> {
        NettyLoops loops = NettyLoops.start();
        Metrics.bindNetty(registry, loops);
        try {
          NettyUpstream upstream = NettyUpstream.start(config, loops);
          yield new Core(
              new NettyProxy(config, loops, served),
              upstream,
              () -> {
                try (loops) {
                  upstream.close();
                }
              });
        } catch (Exception | Error e) {
          loops.close();
          throw e;
        }
      }
    };
  }

  private static HttpIdempotency idempotency(GatewayConfig config, Once once) {
    if (!config.requireTenant()) {
      log.warn(
          "keyed requests without the {} header share one key space: a key one such client sends can"
              + " replay another's response. If every client sends it, set --require-tenant true.",
          config.tenantHeader());
    }
    HttpIdempotency.Builder b =
        HttpIdempotency.builder(once)
            .scope(
                config.requireTenant()
                    ? ScopeResolver.requiredHeader(config.tenantHeader())
                    : ScopeResolver.header(config.tenantHeader()))
            .defaults(config.defaults())
            .coverage(config.coverage())
            .newKeyLimit(config.newKeyLimit());
    config.routes().forEach(r -> b.route(r.pattern(), r.policy()));
    return b.build();
  }

  /** The proxy's port (the bound one, if the configuration asked for 0). */
  public int port() {
    return server.port();
  }

  /** The management port: {@code /health}, {@code /metrics}, {@code /admin}. */
  public int managementPort() {
    return server.managementPort();
  }

  /** The proxy's base URI, for clients on this machine. */
  public URI uri() {
    String host =
        config.bind().equals("0.0.0.0") || config.bind().equals("::") ? "127.0.0.1" : config.bind();
    return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port());
  }

  IdempotencyStore store() {
    return store.store();
  }

  /** The Jetty server of the proxy port, for tests of how it runs requests on Jetty's core. */
  Server proxyServer() {
    if (server.proxy instanceof JettyPort jetty) {
      return jetty.server;
    }
    throw new IllegalStateException("the proxy runs on " + config.core());
  }

  /** Blocks until the gateway has stopped. */
  public void join() throws InterruptedException {
    server.join();
  }

  /**
   * Stops gracefully: no new requests, requests in flight get up to the stop timeout to finish,
   * then the store is closed.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    log.info(
        "once-gateway stopping; waiting up to {} for requests in flight",
        Durations.format(config.stopTimeout()));
    RuntimeException failure = new RuntimeException("stopping the gateway failed");
    server.stop(failure);
    closeQuietly(upstream, failure);
    closeQuietly(purger, failure);
    closeQuietly(once, failure);
    closeQuietly(store, failure);
    registry.close();
    if (failure.getSuppressed().length > 0) {
      log.warn("once-gateway stopped with errors", failure);
    } else {
      log.info("once-gateway stopped");
    }
  }

  /** The command line; see {@code --help}. */
  public static void main(String[] args) {
    leakSamplingOffUnlessAsked();
    int status = run(args, System.getenv(), System.out, System.err, true);
    if (status != 0) {
      System.exit(status);
    }
  }

  /**
   * Netty samples one pooled buffer in 128 for leaks unless told otherwise, recording a stack trace
   * for each sampled one, a share of the event loops' CPU measured in docs/benchmarks.md ("Fewer
   * copies, no leak sampling"). The gateway's suite tracks every buffer instead and fails on any
   * left unreleased, so the process does without it, unless the operator asks for it with Netty's
   * own property ({@code -Dio.netty.leakDetection.level=simple}, or the older {@code
   * io.netty.leakDetectionLevel}). A process decision: only the command line makes it.
   */
  private static void leakSamplingOffUnlessAsked() {
    if (System.getProperty("io.netty.leakDetection.level") == null
        && System.getProperty("io.netty.leakDetectionLevel") == null) {
      ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
    }
  }

  /**
   * Runs the command line: prints help, starts the demo or the gateway. With {@code block}, waits
   * until the process is stopped; returns the exit status.
   */
  static int run(
      String[] args, Map<String, String> env, PrintStream out, PrintStream err, boolean block) {
    Cli.Parsed parsed;
    GatewayConfig.Builder builder;
    try {
      parsed = Cli.parse(args);
      if (parsed.help()) {
        out.print(Cli.help());
        return 0;
      }
      builder = Cli.configure(parsed, env);
    } catch (ConfigException e) {
      err.println("once-gateway: " + e.getMessage());
      return EXIT_CONFIG;
    }
    Gateway gateway;
    try {
      if (parsed.demo()) {
        return Demo.run(parsed, builder, out, err, block);
      }
      gateway = start(builder.build());
    } catch (IllegalStateException | IllegalArgumentException | ConfigException e) {
      err.println("once-gateway: " + e.getMessage());
      return EXIT_CONFIG;
    } catch (StoreUnavailableException e) {
      // OpenStore's message names the store, its address and why: the trace only with debug on.
      err.println("once-gateway: cannot start: " + e.getMessage());
      log.debug("the store could not be opened", e);
      return EXIT_START;
    } catch (Exception e) {
      err.println("once-gateway: cannot start: " + describe(e));
      return EXIT_START;
    }
    if (block) {
      Runtime.getRuntime().addShutdownHook(new Thread(gateway::close, "once-gateway-shutdown"));
      try {
        gateway.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return 0;
  }

  /** The failure and its causes in one line: the root cause is usually what the operator needs. */
  static String describe(Throwable e) {
    StringBuilder s = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      if (c.getMessage() != null && !s.toString().contains(c.getMessage())) {
        s.append(": ").append(c.getMessage());
      }
    }
    return s.toString();
  }

  private static void closeQuietly(@Nullable AutoCloseable c, Throwable into) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception e) {
        into.addSuppressed(e);
      }
    }
  }
}

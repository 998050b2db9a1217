package dev.once.gateway;

import dev.once.Once;
import dev.once.http.Coverage;
import dev.once.http.Durations;
import dev.once.http.NewKeyLimit;
import dev.once.http.RoutePolicy;
import dev.once.http.Sizes;
import dev.once.internal.HttpToken;
import dev.once.store.Keyring;
import dev.once.store.jdbc.EmbeddedStore;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Everything a {@link Gateway} needs, immutable once built. Each setter rejects a bad value with an
 * {@link IllegalArgumentException} naming the option; {@link Builder#build()} rejects missing or
 * contradictory ones with {@link IllegalStateException}. The command line, the environment and the
 * YAML file are all mapped onto this one builder, so every source is validated the same way.
 */
public final class GatewayConfig {

  /**
   * One route of the proxy: requests whose path matches {@code pattern} get {@code policy}.
   *
   * @param pattern a path pattern as {@link dev.once.http.Route} reads it ({@code /charges/*},
   *     {@code /api/**})
   * @param policy what idempotency means on it
   */
  public record RouteSpec(String pattern, RoutePolicy policy) {
    public RouteSpec {
      if (pattern == null || !pattern.startsWith("/")) {
        throw new IllegalArgumentException(
            "route pattern must start with '/', was '" + pattern + "'");
      }
      Objects.requireNonNull(policy, "policy");
    }
  }

  /** The store table (the namespace of the gateway's records) unless one is configured. */
  static final String DEFAULT_STORE_TABLE = "once_records";

  private final String bind;
  private final int port;
  private final int managementPort;
  private final URI upstream;
  private final Path dataDir;
  private final StoreUrl store;
  private final int storePoolSize;
  private final String storeTable;
  private final EmbeddedStore.Durability durability;
  private final ProxyCore core;
  private final String tenantHeader;
  private final boolean requireTenant;
  private final Coverage coverage;
  private final @Nullable String adminToken;
  private final @Nullable Keyring encryptionKeys;
  private final NewKeyLimit newKeyLimit;
  private final Duration upstreamConnectTimeout;
  private final Duration upstreamIdleTimeout;
  private final Duration upstreamTimeout;
  private final int upstreamMaxConnections;
  private final int maxHeaderBytes;
  private final Forwarding forwarding;
  private final Duration requestBodyTimeout;
  private final int minRequestDataRate;
  private final long maxBufferedBytes;
  private final long maxBufferedBytesPerClient;
  private final int storeThreads;
  private final Duration stopTimeout;
  private final Duration purgeInterval;
  private final boolean accessLog;
  private final boolean idempotency;
  private final RoutePolicy defaults;
  private final List<RouteSpec> routes;

  private GatewayConfig(Builder b) {
    this.bind = b.bind;
    this.port = b.port;
    this.managementPort = b.managementPort;
    this.upstream = Objects.requireNonNull(b.upstream, "upstream"); // build() checked it
    this.dataDir = b.dataDir;
    this.store = b.store;
    this.storePoolSize = b.storePoolSize;
    this.storeTable = b.storeTable;
    this.durability = b.durability;
    this.core = b.core;
    this.tenantHeader = b.tenantHeader;
    this.requireTenant = b.requireTenant;
    this.coverage = b.coverage;
    this.adminToken = b.adminToken;
    this.encryptionKeys = b.encryptionKeys;
    this.newKeyLimit =
        b.newKeysPerSecond == 0
            ? NewKeyLimit.UNLIMITED
            : NewKeyLimit.perSecond(b.newKeysPerSecond)
                .burst(
                    b.newKeysBurst > 0
                        ? b.newKeysBurst
                        : (int) Math.max(1, Math.ceil(b.newKeysPerSecond)))
                .build();
    this.upstreamConnectTimeout = b.upstreamConnectTimeout;
    this.upstreamIdleTimeout = b.upstreamIdleTimeout;
    this.upstreamTimeout = b.upstreamTimeout;
    this.upstreamMaxConnections = b.upstreamMaxConnections;
    this.maxHeaderBytes = b.maxHeaderBytes;
    this.forwarding = b.forwarding;
    this.requestBodyTimeout = b.requestBodyTimeout;
    this.minRequestDataRate = b.minRequestDataRate;
    this.maxBufferedBytes =
        b.maxBufferedBytes > 0 ? b.maxBufferedBytes : defaultMaxBufferedBytes(b.heapBytes);
    this.maxBufferedBytesPerClient =
        b.maxBufferedBytesPerClient > 0 ? b.maxBufferedBytesPerClient : maxBufferedBytes / 2;
    this.storeThreads = b.storeThreads;
    this.stopTimeout = b.stopTimeout;
    this.purgeInterval = b.purgeInterval;
    this.accessLog = b.accessLog;
    this.idempotency = b.idempotency;
    this.defaults = b.defaults;
    this.routes = List.copyOf(b.routes);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The address both listeners bind to. */
  public String bind() {
    return bind;
  }

  /** The proxy's port; 0 picks a free one. */
  public int port() {
    return port;
  }

  /** The port of {@code /health}, {@code /metrics} and the admin API; 0 picks a free one. */
  public int managementPort() {
    return managementPort;
  }

  /** The service every request is forwarded to. */
  public URI upstream() {
    return upstream;
  }

  public Path dataDir() {
    return dataDir;
  }

  StoreUrl store() {
    return store;
  }

  int storePoolSize() {
    return storePoolSize;
  }

  /** The table of the embedded or PostgreSQL store. */
  String storeTable() {
    return storeTable;
  }

  EmbeddedStore.Durability durability() {
    return durability;
  }

  /**
   * How long a client connection may stay silent. A client waiting for a slow upstream is silent:
   * it must get the 504, not a connection cut first.
   */
  Duration clientIdleTimeout() {
    return Duration.ofMillis(Math.max(30_000, upstreamTimeout.toMillis() + 5_000));
  }

  /** What carries the proxy port's bytes: see {@link ProxyCore}. */
  ProxyCore core() {
    return core;
  }

  public String tenantHeader() {
    return tenantHeader;
  }

  /** Whether a keyed request without the tenant header is refused (400 {@code tenant-missing}). */
  public boolean requireTenant() {
    return requireTenant;
  }

  /** Whether paths no route matches are guarded with the defaults, or pass through. */
  public Coverage coverage() {
    return coverage;
  }

  /** The admin API's bearer token, or {@code null}: the admin API is off. */
  @Nullable String adminToken() {
    return adminToken;
  }

  /** The keys results are encrypted with at rest, or {@code null}: stored in clear. */
  @Nullable Keyring encryptionKeys() {
    return encryptionKeys;
  }

  /** How fast one tenant may create new records. */
  public NewKeyLimit newKeyLimit() {
    return newKeyLimit;
  }

  public Duration upstreamConnectTimeout() {
    return upstreamConnectTimeout;
  }

  public Duration upstreamIdleTimeout() {
    return upstreamIdleTimeout;
  }

  public Duration upstreamTimeout() {
    return upstreamTimeout;
  }

  public int upstreamMaxConnections() {
    return upstreamMaxConnections;
  }

  /**
   * The largest header section, in bytes, of a request from a client and of a response from the
   * upstream; the same limit holds on every hop, so a response the gateway accepts can be
   * delivered.
   */
  public int maxHeaderBytes() {
    return maxHeaderBytes;
  }

  /** Whose forwarding fields the upstream gets as they came ({@code trusted-proxies}). */
  Forwarding forwarding() {
    return forwarding;
  }

  /**
   * The longest a client may take to send a request body the gateway reads; slower ones get 408.
   */
  public Duration requestBodyTimeout() {
    return requestBodyTimeout;
  }

  /**
   * The slowest, in bytes per second, a client may send a body that streams upstream unread, after
   * {@link #requestBodyTimeout()} of grace (see {@link BodyPace}); slower gets 408. 0: no minimum.
   */
  public int minRequestDataRate() {
    return minRequestDataRate;
  }

  /**
   * The most bytes of bodies held in memory across all requests in flight; over it, 503. Unless
   * configured, a quarter of the heap ({@code -Xmx}, or the container's share of memory).
   */
  public long maxBufferedBytes() {
    return maxBufferedBytes;
  }

  /**
   * The request-body bytes one client address may hold in memory at once, all its connections
   * together; by default half of {@link #maxBufferedBytes()}.
   */
  public long maxBufferedBytesPerClient() {
    return maxBufferedBytesPerClient;
  }

  /**
   * A quarter of the heap: room for the bodies, with the rest left to what is not counted (Jetty's
   * network buffers, the copies a store makes while it encodes a record, the rest of the process).
   */
  static long defaultMaxBufferedBytes(long heapBytes) {
    return heapBytes / 4;
  }

  /**
   * The threads of each store pool (begin, begin on wait-mode routes, finish); no other thread
   * waits on the store. Unless set, {@link StoreUrl#defaultStoreThreads the store's}.
   */
  public int storeThreads() {
    return storeThreads != 0 ? storeThreads : store.defaultStoreThreads();
  }

  public Duration stopTimeout() {
    return stopTimeout;
  }

  public Duration purgeInterval() {
    return purgeInterval;
  }

  public boolean accessLog() {
    return accessLog;
  }

  /** Whether the idempotency filter is installed at all; off makes the gateway a plain proxy. */
  public boolean idempotency() {
    return idempotency;
  }

  /** The policy of paths no route matches. */
  public RoutePolicy defaults() {
    return defaults;
  }

  public List<RouteSpec> routes() {
    return routes;
  }

  @Override
  public String toString() {
    // Safe to log: the store URL hides its password and the admin token is never shown.
    return "GatewayConfig[bind="
        + bind
        + ", port="
        + port
        + ", managementPort="
        + managementPort
        + ", upstream="
        + upstream
        + ", store="
        + store
        + ", dataDir="
        + dataDir
        + ", routes="
        + routes.size()
        + ", trustedProxies="
        + forwarding
        + ", admin="
        + (adminToken == null ? "off" : "on")
        + ", encryption="
        + (encryptionKeys == null ? "off" : "on, active key " + encryptionKeys.activeId())
        + ", newKeyLimit="
        + newKeyLimit
        + "]";
  }

  /** Builds a {@link GatewayConfig}; every setter validates its value and names the option. */
  public static final class Builder {
    private String bind = "0.0.0.0";
    private int port = 8080;
    private int managementPort = 8081;
    private @Nullable URI upstream;
    private Path dataDir = Path.of("data");
    private StoreUrl store = new StoreUrl.Embedded();
    private int storePoolSize = 16;
    private String storeTable = DEFAULT_STORE_TABLE;
    private EmbeddedStore.Durability durability = EmbeddedStore.Durability.SURVIVES_POWER_LOSS;
    private ProxyCore core = ProxyCore.NETTY;
    private String tenantHeader = "Api-Key";
    private boolean requireTenant;
    private Coverage coverage = Coverage.ALL;
    private @Nullable String adminToken;
    private @Nullable Keyring encryptionKeys;
    private double newKeysPerSecond;
    private int newKeysBurst;
    private Duration upstreamConnectTimeout = Duration.ofSeconds(2);
    private Duration upstreamIdleTimeout = Duration.ofSeconds(30);
    private Duration upstreamTimeout = Duration.ofSeconds(30);
    private int upstreamMaxConnections = 256;
    private int maxHeaderBytes = 8 << 10;
    private Forwarding forwarding = Forwarding.NONE;
    private Duration requestBodyTimeout = Duration.ofSeconds(10);
    private int minRequestDataRate = 1 << 10;

    /** 0: a quarter of the heap. */
    private int maxBufferedBytes;

    private int maxBufferedBytesPerClient;

    /** The heap the budget is measured against: this JVM's, unless a test says otherwise. */
    private long heapBytes = Runtime.getRuntime().maxMemory();

    /** 0: the store's default ({@link StoreUrl#defaultStoreThreads}). */
    private int storeThreads;

    private Duration stopTimeout = Duration.ofSeconds(30);
    private Duration purgeInterval = Duration.ofMinutes(1);
    private boolean accessLog = true;
    private boolean idempotency = true;
    private RoutePolicy defaults = RoutePolicy.DEFAULTS;
    private final List<RouteSpec> routes = new ArrayList<>();

    private Builder() {}

    public Builder bind(String bind) {
      if (bind == null || bind.isBlank() || bind.chars().anyMatch(Character::isWhitespace)) {
        throw new IllegalArgumentException(
            "bind must be a host name or IP address, was '" + bind + "'");
      }
      this.bind = bind;
      return this;
    }

    public Builder port(int port) {
      this.port = checkPort("port", port);
      return this;
    }

    public Builder managementPort(int managementPort) {
      this.managementPort = checkPort("management-port", managementPort);
      return this;
    }

    /**
     * The upstream's base URL: {@code http} or {@code https}, a host, an optional port and base
     * path.
     */
    public Builder upstream(String url) {
      URI uri;
      try {
        uri = new URI(url == null ? "" : url.trim());
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException("upstream '" + url + "' is not a URL: " + e.getReason());
      }
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https")) {
        throw new IllegalArgumentException(
            "upstream '" + url + "' must start with http:// or https://");
      }
      if (uri.getHost() == null) {
        throw new IllegalArgumentException(
            "upstream '" + url + "' has no host; write http://host:port");
      }
      if (uri.getRawQuery() != null
          || uri.getRawFragment() != null
          || uri.getRawUserInfo() != null) {
        throw new IllegalArgumentException(
            "upstream '" + url + "' must not have a query, fragment or user info");
      }
      String path = uri.getRawPath() == null ? "" : uri.getRawPath();
      this.upstream =
          URI.create(
              scheme
                  + "://"
                  + uri.getRawAuthority()
                  + (path.endsWith("/") ? path.substring(0, path.length() - 1) : path));
      return this;
    }

    public Builder dataDir(Path dataDir) {
      if (dataDir == null || dataDir.toString().isBlank()) {
        throw new IllegalArgumentException("data-dir must not be blank");
      }
      this.dataDir = dataDir;
      return this;
    }

    /** {@code embedded}, {@code postgres://…}, {@code redis://…} or {@code redis-cluster://…}. */
    public Builder store(String url) {
      if (url == null || url.isBlank()) {
        throw new IllegalArgumentException("store must not be blank; use " + StoreUrl.FORMS);
      }
      this.store = StoreUrl.parse(url);
      return this;
    }

    public Builder storePoolSize(int storePoolSize) {
      this.storePoolSize = checkCount("store-pool-size", storePoolSize, 1000);
      return this;
    }

    /**
     * The namespace of the gateway's records: the table of the embedded or PostgreSQL store, {@code
     * name} or (PostgreSQL) {@code schema.name}, created if missing; on Redis, the prefix of every
     * key ({@code name:}). Default {@code once_records} (on Redis, the store's default prefix).
     */
    public Builder storeTable(String storeTable) {
      String part = "[A-Za-z_][A-Za-z0-9_]{0,47}";
      if (storeTable == null || !storeTable.matches(part + "(\\." + part + ")?")) {
        throw new IllegalArgumentException(
            "store-table must be name or schema.name, each matching "
                + part
                + "; was '"
                + storeTable
                + "'");
      }
      this.storeTable = storeTable;
      return this;
    }

    public Builder durability(EmbeddedStore.Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability");
      return this;
    }

    /** What carries the proxy port's bytes (default Netty's): see {@code --core}. */
    Builder core(ProxyCore core) {
      this.core = Objects.requireNonNull(core, "core");
      return this;
    }

    /**
     * The request header whose SHA-256 is the tenant part of every scope (default {@code Api-Key}).
     */
    public Builder tenantHeader(String tenantHeader) {
      if (tenantHeader == null || !HttpToken.is(tenantHeader, 100)) {
        throw new IllegalArgumentException(
            "tenant-header must be an HTTP header name, was '" + tenantHeader + "'");
      }
      this.tenantHeader = tenantHeader;
      return this;
    }

    /** Refuses keyed requests without the tenant header, instead of scoping them to "no tenant". */
    public Builder requireTenant(boolean requireTenant) {
      this.requireTenant = requireTenant;
      return this;
    }

    /** Whether paths no route matches are guarded with the defaults (the default) or not. */
    public Builder coverage(Coverage coverage) {
      this.coverage = java.util.Objects.requireNonNull(coverage, "coverage");
      return this;
    }

    /**
     * The proxies (IP addresses, comma-separated) whose {@code Forwarded} and {@code X-Forwarded-*}
     * fields reach the upstream as they came; from anyone else the gateway writes its own. Empty:
     * nobody (the default).
     */
    public Builder trustedProxies(String addresses) {
      this.forwarding = Forwarding.parse(addresses);
      return this;
    }

    /** Turns the admin API on, guarded by this bearer token (at least 16 characters). */
    public Builder adminToken(String adminToken) {
      if (adminToken != null
          && (adminToken.length() < 16
              || adminToken.length() > 512
              || !adminToken.chars().allMatch(c -> c > 0x20 && c < 0x7F))) {
        // Never echo the token itself.
        throw new IllegalArgumentException(
            "admin-token must be 16-512 printable ASCII characters without spaces");
      }
      this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
      return this;
    }

    /**
     * Encrypts stored results and recovery points with AES-GCM under these keys (the active one
     * writes, the others only read); {@code null} stores them in clear (the default).
     */
    public Builder encryptionKeys(Keyring keys) {
      this.encryptionKeys = keys;
      return this;
    }

    /** The sustained rate of new keys one tenant may create; 0 (the default) is no limit. */
    public Builder newKeysPerSecond(double perSecond) {
      if (perSecond != 0) {
        NewKeyLimit.perSecond(perSecond); // validates, naming the option
      }
      this.newKeysPerSecond = perSecond;
      return this;
    }

    /** How many new keys a tenant may create at once; default one second's worth. */
    public Builder newKeysBurst(int burst) {
      if (burst < 1) {
        throw new IllegalArgumentException("new-keys-burst must be at least 1, was " + burst);
      }
      this.newKeysBurst = burst;
      return this;
    }

    public Builder upstreamConnectTimeout(Duration d) {
      this.upstreamConnectTimeout =
          checkDuration(
              "upstream-connect-timeout", d, Duration.ofMillis(10), Duration.ofMinutes(5));
      return this;
    }

    public Builder upstreamIdleTimeout(Duration d) {
      this.upstreamIdleTimeout =
          checkDuration("upstream-idle-timeout", d, Duration.ofMillis(10), Duration.ofHours(1));
      return this;
    }

    /** The longest one upstream exchange may take, from sending to the last response byte. */
    public Builder upstreamTimeout(Duration d) {
      this.upstreamTimeout =
          checkDuration("upstream-timeout", d, Duration.ofMillis(10), Duration.ofHours(1));
      return this;
    }

    public Builder upstreamMaxConnections(int n) {
      this.upstreamMaxConnections = checkCount("upstream-max-connections", n, 100_000);
      return this;
    }

    public Builder maxHeaderBytes(int bytes) {
      this.maxHeaderBytes = checkSize("max-header-bytes", bytes, 1 << 10, 64 << 10);
      return this;
    }

    public Builder requestBodyTimeout(Duration d) {
      this.requestBodyTimeout =
          checkDuration("request-body-timeout", d, Duration.ofMillis(100), Duration.ofHours(1));
      return this;
    }

    /** See {@link GatewayConfig#minRequestDataRate()}. */
    public Builder minRequestDataRate(int bytesPerSecond) {
      this.minRequestDataRate =
          checkSize("min-request-data-rate", bytesPerSecond, 0, Integer.MAX_VALUE);
      return this;
    }

    /**
     * The request-body bytes one client may hold in memory at once, all its connections together
     * (the peer's address, or the client a trusted proxy names); more gets 503. At most {@code
     * max-buffered-bytes}; by default half of it.
     */
    public Builder maxBufferedBytesPerClient(int bytes) {
      this.maxBufferedBytesPerClient =
          checkSize("max-buffered-bytes-per-client", bytes, 64 << 10, Integer.MAX_VALUE);
      return this;
    }

    public Builder maxBufferedBytes(int bytes) {
      this.maxBufferedBytes = checkSize("max-buffered-bytes", bytes, 64 << 10, Integer.MAX_VALUE);
      return this;
    }

    /** For tests: the heap that {@code max-buffered-bytes} is checked against and follows. */
    Builder heapBytes(long heapBytes) {
      this.heapBytes = heapBytes;
      return this;
    }

    public Builder storeThreads(int n) {
      this.storeThreads = checkCount("store-threads", n, Once.Builder.MAX_STORE_THREADS);
      return this;
    }

    /** How long a stop waits for requests in flight to finish. */
    public Builder stopTimeout(Duration d) {
      this.stopTimeout = checkDuration("stop-timeout", d, Duration.ZERO, Duration.ofMinutes(10));
      return this;
    }

    public Builder purgeInterval(Duration d) {
      this.purgeInterval =
          checkDuration("purge-interval", d, Duration.ofSeconds(1), Duration.ofDays(1));
      return this;
    }

    public Builder accessLog(boolean accessLog) {
      this.accessLog = accessLog;
      return this;
    }

    public Builder idempotency(boolean idempotency) {
      this.idempotency = idempotency;
      return this;
    }

    public Builder defaults(RoutePolicy defaults) {
      this.defaults = Objects.requireNonNull(defaults, "defaults");
      return this;
    }

    /** Adds a route; the first matching route wins, in the order added. */
    public Builder route(String pattern, RoutePolicy policy) {
      routes.add(new RouteSpec(pattern, policy));
      return this;
    }

    /** Replaces the routes. */
    public Builder routes(List<RouteSpec> routes) {
      this.routes.clear();
      this.routes.addAll(routes);
      return this;
    }

    /**
     * @throws IllegalStateException if the upstream is missing, the two ports collide or the buffer
     *     budget is over half of the heap
     */
    public GatewayConfig build() {
      if (upstream == null) {
        throw new IllegalStateException(
            "upstream is required: pass --upstream URL, set ONCE_UPSTREAM,"
                + " or write 'upstream:' in the config file (or try --demo)");
      }
      if (newKeysBurst > 0 && newKeysPerSecond == 0) {
        throw new IllegalStateException("new-keys-burst needs new-keys-per-second");
      }
      if (port != 0 && port == managementPort) {
        throw new IllegalStateException("port and management-port must differ, both are " + port);
      }
      // Bodies are not all the heap holds: a budget the heap cannot honour ends in an
      // OutOfMemoryError that kills Jetty's selector threads, not in a 503.
      if (maxBufferedBytes > heapBytes / 2) {
        throw new IllegalStateException(
            "max-buffered-bytes "
                + Sizes.format(maxBufferedBytes)
                + " is over half of the heap ("
                + (heapBytes / (1 << 20))
                + "MiB): lower it, or raise -Xmx; unset, it is a quarter of the heap");
      }
      long budget = maxBufferedBytes > 0 ? maxBufferedBytes : defaultMaxBufferedBytes(heapBytes);
      if (maxBufferedBytesPerClient > budget) {
        throw new IllegalStateException(
            "max-buffered-bytes-per-client "
                + Sizes.format(maxBufferedBytesPerClient)
                + " is over max-buffered-bytes ("
                + (budget >> 10)
                + "KiB)");
      }
      return new GatewayConfig(this);
    }

    private static int checkPort(String name, int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException(name + " must be 0-65535, was " + port);
      }
      return port;
    }

    private static int checkCount(String name, int n, int max) {
      if (n < 1 || n > max) {
        throw new IllegalArgumentException(name + " must be 1-" + max + ", was " + n);
      }
      return n;
    }

    private static int checkSize(String name, int bytes, int min, int max) {
      if (bytes < min || bytes > max) {
        throw new IllegalArgumentException(
            name
                + " must be between "
                + Sizes.format(min)
                + " and "
                + (max == Integer.MAX_VALUE ? "2GiB" : Sizes.format(max))
                + ", was "
                + Sizes.format(bytes));
      }
      return bytes;
    }

    private static Duration checkDuration(String name, Duration d, Duration min, Duration max) {
      if (d == null || d.compareTo(min) < 0 || d.compareTo(max) > 0) {
        throw new IllegalArgumentException(
            name
                + " must be between "
                + Durations.format(min)
                + " and "
                + Durations.format(max)
                + ", was "
                + (d == null ? "nothing" : Durations.format(d)));
      }
      return d;
    }
  }
}

package dev.once.spring;

import dev.once.FailureMode;
import dev.once.http.Coverage;
import dev.once.http.HttpOutcomes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * The {@code once.*} properties. They are only mapped onto the core builders ({@code RoutePolicy},
 * {@code ExecutionPolicy}; route policies through once-http's {@code RouteOptions}), which validate
 * them: an unset policy property inherits, from {@code once.defaults.*} for a route and from the
 * core's defaults for {@code once.defaults.*}. The defaults are listed in {@code
 * docs/spring-boot.md}.
 */
@ConfigurationProperties("once")
public class OnceProperties {

  /** Whether the idempotency filter is installed. */
  private boolean enabled = true;

  private final Scope scope = new Scope();

  private final Filter filter = new Filter();

  private final Store store = new Store();

  private final Observation observation = new Observation();

  private final Encryption encryption = new Encryption();

  private final NewKeys newKeys = new NewKeys();

  /**
   * Which paths are guarded: all (the routes, and the defaults for every other path) or routes
   * (only the @Idempotent handlers and once.routes; other paths pass through untouched).
   */
  private Coverage coverage = Coverage.ALL;

  /** The policy of every route, and of paths no route matches. */
  private final Policy defaults = new Policy();

  /** Routes with their own policy, first match wins; unset properties inherit once.defaults. */
  private List<Route> routes = new ArrayList<>();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Scope getScope() {
    return scope;
  }

  public Coverage getCoverage() {
    return coverage;
  }

  public void setCoverage(Coverage coverage) {
    this.coverage = coverage;
  }

  public Filter getFilter() {
    return filter;
  }

  public Store getStore() {
    return store;
  }

  public Encryption getEncryption() {
    return encryption;
  }

  public NewKeys getNewKeys() {
    return newKeys;
  }

  public Observation getObservation() {
    return observation;
  }

  public Policy getDefaults() {
    return defaults;
  }

  public List<Route> getRoutes() {
    return routes;
  }

  public void setRoutes(List<Route> routes) {
    this.routes = routes;
  }

  /** How a key's owner is found. */
  public enum ScopeType {
    /** The SHA-256 of a request header (an API key or token): never stored in clear. */
    HEADER,
    /** The authenticated principal's name. */
    PRINCIPAL,
    /** Everybody shares one namespace: single-tenant services only. */
    GLOBAL
  }

  /** Encryption at rest of recorded responses (AES-GCM, a key id per record). */
  public static class Encryption {

    /**
     * The keyring, id:base64key[,id:base64key...]: the first key encrypts, the others only decrypt
     * (rotation). Unset: responses are stored as they are. Never logged.
     */
    private @Nullable String keys;

    /** Whether records written before encryption was switched on are still read (a migration). */
    private boolean readPlaintext;

    public @Nullable String getKeys() {
      return keys;
    }

    public void setKeys(@Nullable String keys) {
      this.keys = keys;
    }

    public boolean isReadPlaintext() {
      return readPlaintext;
    }

    public void setReadPlaintext(boolean readPlaintext) {
      this.readPlaintext = readPlaintext;
    }

    @Override
    public String toString() {
      return "Encryption[keys=" + (keys == null ? "unset" : "***") + "]";
    }
  }

  /** How fast one tenant may create new records; over it, 429 with Retry-After. */
  public static class NewKeys {

    /** New records per tenant per second, sustained. Unset: no limit. */
    private @Nullable Double perSecond;

    /**
     * How many new records a tenant may create at once above the sustained rate; unset: the core's
     * default.
     */
    private @Nullable Integer burst;

    /**
     * How many tenants are tracked one by one; the rest share one bucket. Unset: the core's
     * default.
     */
    private @Nullable Integer maxTenants;

    public @Nullable Double getPerSecond() {
      return perSecond;
    }

    public void setPerSecond(@Nullable Double perSecond) {
      this.perSecond = perSecond;
    }

    public @Nullable Integer getBurst() {
      return burst;
    }

    public void setBurst(@Nullable Integer burst) {
      this.burst = burst;
    }

    public @Nullable Integer getMaxTenants() {
      return maxTenants;
    }

    public void setMaxTenants(@Nullable Integer maxTenants) {
      this.maxTenants = maxTenants;
    }
  }

  /** Who owns a key: records are unique per scope and key. */
  public static class Scope {

    /** Where the tenant comes from. */
    private ScopeType type = ScopeType.HEADER;

    /** The request header naming the tenant, when the type is header. */
    private String header = "Api-Key";

    /**
     * Whether a keyed request that names no tenant (no header, or no authenticated principal) is
     * refused with 400 tenant-missing, instead of sharing one key space with every other such
     * request.
     */
    private boolean required;

    public ScopeType getType() {
      return type;
    }

    public void setType(ScopeType type) {
      this.type = type;
    }

    public String getHeader() {
      return header;
    }

    public void setHeader(String header) {
      this.header = header;
    }

    public boolean isRequired() {
      return required;
    }

    public void setRequired(boolean required) {
      this.required = required;
    }
  }

  /** How the servlet filter is registered. */
  public static class Filter {

    /**
     * The filter's order; the default runs it after Spring Security (-100), so requests are
     * authenticated before they touch the store.
     */
    private int order = 0;

    /** The URL patterns the filter is mapped to. */
    private List<String> urlPatterns = new ArrayList<>(List.of("/*"));

    /**
     * Reactive applications: how long a client may take to send the body of a keyed request, which
     * the filter reads whole; slower gets 408. Unset: the filter's default (10s).
     */
    private @Nullable Duration bodyTimeout;

    public int getOrder() {
      return order;
    }

    public void setOrder(int order) {
      this.order = order;
    }

    public List<String> getUrlPatterns() {
      return urlPatterns;
    }

    public void setUrlPatterns(List<String> urlPatterns) {
      this.urlPatterns = urlPatterns;
    }

    public @Nullable Duration getBodyTimeout() {
      return bodyTimeout;
    }

    public void setBodyTimeout(@Nullable Duration bodyTimeout) {
      this.bodyTimeout = bodyTimeout;
    }
  }

  /** Micrometer Observations of store calls. */
  public static class Observation {

    /**
     * Whether every store call is observed (once.store spans and timer) and the engine's decisions
     * are written on the request's observation (span events and once.* attributes) when there is an
     * ObservationRegistry.
     */
    private boolean enabled = true;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  /** Which store is used when the application defines no IdempotencyStore bean. */
  public enum StoreType {
    /**
     * The application's DataSource (PostgreSQL or MariaDB), else its Redis connection factory
     * (Lettuce), else in memory with a warning.
     */
    AUTO,
    /** The application's DataSource; startup fails without one. */
    JDBC,
    /**
     * The application's Lettuce Redis connection factory, standalone or Cluster; startup fails
     * without one.
     */
    REDIS,
    /** In memory: lost on restart, not shared between nodes. */
    MEMORY
  }

  /** The store, when the application defines no IdempotencyStore bean. */
  public static class Store {

    /** How the store is chosen. */
    private StoreType type = StoreType.AUTO;

    /** The JDBC store's table, name or schema.name; unset: once_records. */
    private @Nullable String tableName;

    /** Whether the JDBC store creates its table at startup if it is missing. */
    private boolean autoCreateSchema = true;

    /** The longest one JDBC store statement may run; unset: 5 seconds. */
    private @Nullable Duration queryTimeout;

    private final Purge purge = new Purge();

    private final Redis redis = new Redis();

    public StoreType getType() {
      return type;
    }

    public void setType(StoreType type) {
      this.type = type;
    }

    public @Nullable String getTableName() {
      return tableName;
    }

    public void setTableName(@Nullable String tableName) {
      this.tableName = tableName;
    }

    public boolean isAutoCreateSchema() {
      return autoCreateSchema;
    }

    public void setAutoCreateSchema(boolean autoCreateSchema) {
      this.autoCreateSchema = autoCreateSchema;
    }

    public @Nullable Duration getQueryTimeout() {
      return queryTimeout;
    }

    public void setQueryTimeout(@Nullable Duration queryTimeout) {
      this.queryTimeout = queryTimeout;
    }

    public Purge getPurge() {
      return purge;
    }

    public Redis getRedis() {
      return redis;
    }
  }

  /** The Redis store, on the application's Lettuce connection factory. */
  public static class Redis {

    /** The prefix of every key the store writes; unset: once: */
    private @Nullable String keyPrefix;

    /** The longest one Redis command may take; unset: 2 seconds. */
    private @Nullable Duration commandTimeout;

    /** How many gathered batches may be under way on the store at once, 1 to 4; unset: 1. */
    private @Nullable Integer batchesAtOnce;

    public @Nullable String getKeyPrefix() {
      return keyPrefix;
    }

    public void setKeyPrefix(@Nullable String keyPrefix) {
      this.keyPrefix = keyPrefix;
    }

    public @Nullable Duration getCommandTimeout() {
      return commandTimeout;
    }

    public void setCommandTimeout(@Nullable Duration commandTimeout) {
      this.commandTimeout = commandTimeout;
    }

    public @Nullable Integer getBatchesAtOnce() {
      return batchesAtOnce;
    }

    public void setBatchesAtOnce(@Nullable Integer batchesAtOnce) {
      this.batchesAtOnce = batchesAtOnce;
    }
  }

  /** Deleting expired records in the background. */
  public static class Purge {

    /** Whether expired records are purged in the background. */
    private boolean enabled = true;

    /** How often a purge round starts. */
    private Duration interval = Duration.ofMinutes(1);

    /** How many records one purge statement deletes at most. */
    private int batchSize = 1000;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getInterval() {
      return interval;
    }

    public void setInterval(Duration interval) {
      this.interval = interval;
    }

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }
  }

  /**
   * A route's policy. Every property left unset inherits. Apart from {@code transactional}, each
   * property is a route option of once-http's {@code RouteOptions}, named and typed after it; the
   * descriptions and defaults IDEs show come from that table through {@code
   * additional-spring-configuration-metadata.json}, so the fields carry no javadoc of their own
   * (the processor would take it). Tests fail when the fields, the metadata or the docs disagree
   * with it.
   */
  public static class Policy {

    private @Nullable List<String> methods;

    private @Nullable Boolean keyRequired;

    private @Nullable String keyHeader;

    private @Nullable HttpOutcomes replay;

    private @Nullable Duration lease;

    private @Nullable Duration ttl;

    private @Nullable InFlightMode inFlight;

    private @Nullable Duration maxWait;

    private @Nullable Duration inFlightRetryAfter;

    private @Nullable FailureMode failureMode;

    private @Nullable DataSize maxRequestBytes;

    private @Nullable DataSize maxResponseBytes;

    private @Nullable Integer maxWaitersPerKey;

    private @Nullable Duration storeRetryAfter;

    private @Nullable List<String> excludedJsonPointers;

    private @Nullable List<String> replayHeaderDenylist;

    /**
     * Whether the claim, the handler's database writes and the recorded response commit in one
     * transaction (needs a PostgreSQL or MariaDB DataSource store and a transaction manager).
     */
    private @Nullable Boolean transactional;

    public @Nullable List<String> getMethods() {
      return methods;
    }

    public void setMethods(@Nullable List<String> methods) {
      this.methods = methods;
    }

    public @Nullable Boolean getKeyRequired() {
      return keyRequired;
    }

    public void setKeyRequired(@Nullable Boolean keyRequired) {
      this.keyRequired = keyRequired;
    }

    public @Nullable String getKeyHeader() {
      return keyHeader;
    }

    public void setKeyHeader(@Nullable String keyHeader) {
      this.keyHeader = keyHeader;
    }

    public @Nullable HttpOutcomes getReplay() {
      return replay;
    }

    public void setReplay(@Nullable HttpOutcomes replay) {
      this.replay = replay;
    }

    public @Nullable Duration getLease() {
      return lease;
    }

    public void setLease(@Nullable Duration lease) {
      this.lease = lease;
    }

    public @Nullable Duration getTtl() {
      return ttl;
    }

    public void setTtl(@Nullable Duration ttl) {
      this.ttl = ttl;
    }

    public @Nullable InFlightMode getInFlight() {
      return inFlight;
    }

    public void setInFlight(@Nullable InFlightMode inFlight) {
      this.inFlight = inFlight;
    }

    public @Nullable Duration getMaxWait() {
      return maxWait;
    }

    public void setMaxWait(@Nullable Duration maxWait) {
      this.maxWait = maxWait;
    }

    public @Nullable Duration getInFlightRetryAfter() {
      return inFlightRetryAfter;
    }

    public void setInFlightRetryAfter(@Nullable Duration inFlightRetryAfter) {
      this.inFlightRetryAfter = inFlightRetryAfter;
    }

    public @Nullable FailureMode getFailureMode() {
      return failureMode;
    }

    public void setFailureMode(@Nullable FailureMode failureMode) {
      this.failureMode = failureMode;
    }

    public @Nullable DataSize getMaxRequestBytes() {
      return maxRequestBytes;
    }

    public void setMaxRequestBytes(@Nullable DataSize maxRequestBytes) {
      this.maxRequestBytes = maxRequestBytes;
    }

    public @Nullable DataSize getMaxResponseBytes() {
      return maxResponseBytes;
    }

    public void setMaxResponseBytes(@Nullable DataSize maxResponseBytes) {
      this.maxResponseBytes = maxResponseBytes;
    }

    public @Nullable Integer getMaxWaitersPerKey() {
      return maxWaitersPerKey;
    }

    public void setMaxWaitersPerKey(@Nullable Integer maxWaitersPerKey) {
      this.maxWaitersPerKey = maxWaitersPerKey;
    }

    public @Nullable Duration getStoreRetryAfter() {
      return storeRetryAfter;
    }

    public void setStoreRetryAfter(@Nullable Duration storeRetryAfter) {
      this.storeRetryAfter = storeRetryAfter;
    }

    public @Nullable List<String> getExcludedJsonPointers() {
      return excludedJsonPointers;
    }

    public void setExcludedJsonPointers(@Nullable List<String> excludedJsonPointers) {
      this.excludedJsonPointers = excludedJsonPointers;
    }

    public @Nullable List<String> getReplayHeaderDenylist() {
      return replayHeaderDenylist;
    }

    public void setReplayHeaderDenylist(@Nullable List<String> replayHeaderDenylist) {
      this.replayHeaderDenylist = replayHeaderDenylist;
    }

    public @Nullable Boolean getTransactional() {
      return transactional;
    }

    public void setTransactional(@Nullable Boolean transactional) {
      this.transactional = transactional;
    }
  }

  /** A route: a path pattern and its own policy. */
  public static class Route extends Policy {

    /**
     * The path pattern inside the application: literal segments, * or {name} for one segment, and a
     * final ** for the rest.
     */
    private @Nullable String pattern;

    public @Nullable String getPattern() {
      return pattern;
    }

    public void setPattern(@Nullable String pattern) {
      this.pattern = pattern;
    }
  }
}

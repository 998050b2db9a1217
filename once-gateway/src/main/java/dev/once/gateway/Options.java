package dev.once.gateway;

import dev.once.http.Coverage;
import dev.once.http.Durations;
import dev.once.http.Sizes;
import dev.once.store.Keyring;
import dev.once.store.jdbc.EmbeddedStore;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Every scalar option of the gateway, in the order {@code --help} lists them. Routes live in the
 * YAML file only.
 */
final class Options {

  static final List<Option> ALL =
      List.of(
          new Option(
              "port",
              "8080",
              "port of the proxy (0 picks a free one)",
              (b, v) -> b.port(integer("port", v))),
          new Option(
              "management-port",
              "8081",
              "port of /health, /metrics, /admin and /console (0 picks a free one)",
              (b, v) -> b.managementPort(integer("management-port", v))),
          new Option(
              "bind", "0.0.0.0", "address both ports listen on", GatewayConfig.Builder::bind),
          new Option(
              "upstream",
              "(required)",
              "base URL every request is forwarded to, e.g. http://127.0.0.1:3000",
              GatewayConfig.Builder::upstream),
          new Option(
              "store",
              "embedded",
              "embedded | postgres://user[:pw]@host:port/db | redis://host:port | redis-cluster://h1:p1,h2:p2",
              GatewayConfig.Builder::store),
          new Option(
              "data-dir",
              "./data",
              "directory of the embedded store's file",
              (b, v) -> b.dataDir(Path.of(v))),
          new Option(
              "durability",
              "power-loss",
              "embedded store: power-loss (fsync each commit) | process-crash (faster)",
              (b, v) -> b.durability(durability(v))),
          new Option(
              "store-pool-size",
              "16",
              "PostgreSQL connection pool size",
              (b, v) -> b.storePoolSize(integer("store-pool-size", v))),
          new Option(
              "store-table",
              "once_records",
              "namespace of the records: table of the embedded or PostgreSQL store (created if missing), key prefix on Redis",
              GatewayConfig.Builder::storeTable),
          new Option(
              "tenant-header",
              "Api-Key",
              "request header whose SHA-256 scopes the keys (tenant)",
              GatewayConfig.Builder::tenantHeader),
          new Option(
              "require-tenant",
              "false",
              "true refuses keyed requests without the tenant header (400 tenant-missing)",
              (b, v) -> b.requireTenant(bool("require-tenant", v))),
          new Option(
              "coverage",
              "all",
              "all: paths no route matches are guarded with the defaults | routes: only the YAML routes are guarded, other paths pass through",
              (b, v) -> b.coverage(coverage(v))),
          new Option(
              "upstream-connect-timeout",
              "2s",
              "longest wait to connect to the upstream",
              (b, v) -> b.upstreamConnectTimeout(Durations.parse(v))),
          new Option(
              "upstream-idle-timeout",
              "30s",
              "longest silence on an upstream connection",
              (b, v) -> b.upstreamIdleTimeout(Durations.parse(v))),
          new Option(
              "upstream-timeout",
              "30s",
              "longest one upstream exchange may take in total",
              (b, v) -> b.upstreamTimeout(Durations.parse(v))),
          new Option(
              "upstream-max-connections",
              "256",
              "connections to the upstream at most",
              (b, v) -> b.upstreamMaxConnections(integer("upstream-max-connections", v))),
          new Option(
              "core",
              "netty",
              "what carries the proxy port's bytes: netty (event loops) | jetty (Jetty's server and client)",
              (b, v) -> b.core(ProxyCore.parse(v))),
          new Option(
              "max-header-bytes",
              "8KiB",
              "largest header section of a client request and of an upstream response",
              (b, v) -> b.maxHeaderBytes(Sizes.parse(v))),
          new Option(
              "request-body-timeout",
              "10s",
              "longest a client may take to send a request body; slower gets 408",
              (b, v) -> b.requestBodyTimeout(Durations.parse(v))),
          new Option(
              "min-request-data-rate",
              "1KiB",
              "slowest a client may send a body that streams upstream unread, in bytes per second, after request-body-timeout of grace; slower gets 408; 0 for no minimum",
              (b, v) -> b.minRequestDataRate(Sizes.parse(v))),
          new Option(
              Forwarding.OPTION,
              "(none)",
              "IP addresses, comma-separated, of proxies in front of the gateway whose Forwarded and X-Forwarded-* fields are kept; from others the gateway sets its own",
              GatewayConfig.Builder::trustedProxies),
          new Option(
              "max-buffered-bytes",
              "a quarter of the heap",
              "request and response bodies held in memory at most, all requests together; over it 503; at most half of the heap",
              (b, v) -> b.maxBufferedBytes(Sizes.parse(v))),
          new Option(
              "max-buffered-bytes-per-client",
              "half of max-buffered-bytes",
              "request bodies one client address may hold in memory at once, all its connections together (behind a trusted proxy, the client it names); over it 503",
              (b, v) -> b.maxBufferedBytesPerClient(Sizes.parse(v))),
          new Option(
              "store-threads",
              StoreUrl.DEFAULT_STORE_THREADS,
              "threads that call a blocking store (PostgreSQL) and the embedded store's gathered batches; Redis needs none, and no thread waits for a duplicate",
              (b, v) -> b.storeThreads(integer("store-threads", v))),
          new Option(
              "admin-token",
              "(off)",
              "bearer token of the admin API and console; unset keeps both off (prefer the env variable)",
              GatewayConfig.Builder::adminToken),
          new Option(
              "encryption-keys",
              "(off)",
              "id:base64key[,id:base64key...]: AES keys encrypting stored responses, the first writes (prefer the env variable)",
              (b, v) -> b.encryptionKeys(Keyring.parse(v))),
          new Option(
              "encryption-keys-file",
              "(off)",
              "file holding the encryption keys in the same form",
              (b, v) -> b.encryptionKeys(Keyring.parse(readSecretFile("encryption-keys-file", v)))),
          new Option(
              "new-keys-per-second",
              "0 (off)",
              "new keys one tenant may create per second; more get 429",
              (b, v) -> b.newKeysPerSecond(decimal("new-keys-per-second", v))),
          new Option(
              "new-keys-burst",
              "one second's worth",
              "new keys one tenant may create at once",
              (b, v) -> b.newKeysBurst(integer("new-keys-burst", v))),
          new Option(
              "stop-timeout",
              "30s",
              "on shutdown, how long requests in flight may take to finish",
              (b, v) -> b.stopTimeout(Durations.parse(v))),
          new Option(
              "purge-interval",
              "1m",
              "how often expired records are purged (not on Redis, which expires them itself)",
              (b, v) -> b.purgeInterval(Durations.parse(v))),
          new Option(
              "access-log",
              "true",
              "one log line per request (never bodies or credentials)",
              (b, v) -> b.accessLog(bool("access-log", v))),
          new Option(
              "idempotency",
              "true",
              "false makes the gateway a plain proxy (for comparison)",
              (b, v) -> b.idempotency(bool("idempotency", v))));

  private Options() {}

  /** The options by name. */
  static Map<String, Option> byName() {
    Map<String, Option> map = new LinkedHashMap<>();
    for (Option o : ALL) {
      map.put(o.name(), o);
    }
    return map;
  }

  static int integer(String name, String v) {
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a whole number, was '" + v + "'");
    }
  }

  static double decimal(String name, String v) {
    try {
      return Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a number, was '" + v + "'");
    }
  }

  /** A file's text, trimmed; errors name the option and the file, never its content. */
  static String readSecretFile(String name, String path) {
    try {
      return java.nio.file.Files.readString(Path.of(path.trim())).trim();
    } catch (java.io.IOException | java.nio.file.InvalidPathException e) {
      throw new IllegalArgumentException(
          name + ": cannot read '" + path + "': " + e.getClass().getSimpleName());
    }
  }

  static boolean bool(String name, String v) {
    return switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "true", "yes", "on" -> true;
      case "false", "no", "off" -> false;
      default ->
          throw new IllegalArgumentException(name + " must be true or false, was '" + v + "'");
    };
  }

  private static Coverage coverage(String v) {
    try {
      return Coverage.parse(v);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("coverage " + e.getMessage(), e);
    }
  }

  private static EmbeddedStore.Durability durability(String v) {
    return switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "power-loss" -> EmbeddedStore.Durability.SURVIVES_POWER_LOSS;
      case "process-crash" -> EmbeddedStore.Durability.SURVIVES_PROCESS_CRASH;
      default ->
          throw new IllegalArgumentException(
              "durability must be power-loss or process-crash, was '" + v + "'");
    };
  }
}

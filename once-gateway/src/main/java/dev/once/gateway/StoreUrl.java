package dev.once.gateway;

import dev.once.Once;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Where the gateway keeps its records, parsed and validated from {@code --store}: {@code embedded}
 * (the default: a file in the data directory), {@code postgres://user[:password]@host[:port]/db},
 * {@code redis://[:password@]host[:port][/db]} or {@code redis-cluster://host1:port1,host2:port2}.
 * Its {@code toString()} never shows a password.
 */
sealed interface StoreUrl {

  String FORMS =
      "embedded, postgres://user[:password]@host[:port]/database, redis://host[:port] or"
          + " redis-cluster://host1:port1,host2:port2";

  /** What kind of store, for operators: "PostgreSQL", "Redis", ... */
  String kind();

  /**
   * Whether the store deletes expired records by itself, so the gateway purges only when asked
   * ({@code POST /admin/purge}), never every {@code purge-interval}: Redis expires each record's
   * key, and a purge there is a pass over every key under the prefix, which with millions of live
   * records kept Redis busy for seconds each time.
   */
  default boolean expiresRecordsItself() {
    return this instanceof Redis || this instanceof RedisCluster;
  }

  /**
   * The engine's store threads unless {@code store-threads} names a number. A blocking store
   * (PostgreSQL) holds one for every call in flight. On the embedded store, whose writer commits
   * every call and carries each exchange on after a single call's answer itself (OpenStore), the
   * threads only wait for the gathered batches, which the engine sends one at a time, and the
   * heartbeats: one a core is enough, and more only meant a thread woken for every answer (at 50
   * clients on 2 cores, 16 threads cost 15 % more CPU per request than 2: docs/benchmarks.md).
   * Redis answers on its client's threads and needs none; idle threads end by themselves.
   */
  default int defaultStoreThreads() {
    return this instanceof Embedded
        ? Runtime.getRuntime().availableProcessors()
        : Once.Builder.DEFAULT_STORE_THREADS;
  }

  /** How {@link #defaultStoreThreads} reads in {@code --help} and the docs. */
  String DEFAULT_STORE_THREADS =
      Once.Builder.DEFAULT_STORE_THREADS + "; one a core on the embedded store";

  /**
   * Where it is, without user or password: host:port[/database], the seeds, or "data directory".
   */
  String address();

  /** The embedded store in the data directory: one gateway instance only. */
  record Embedded() implements StoreUrl {
    @Override
    public String kind() {
      return "embedded";
    }

    @Override
    public String address() {
      return "the data directory";
    }

    @Override
    public String toString() {
      return "embedded";
    }
  }

  /** PostgreSQL, shared by many gateway instances. */
  record Postgres(
      String host, int port, String database, String user, @Nullable String password, String query)
      implements StoreUrl {
    String jdbcUrl() {
      return "jdbc:postgresql://"
          + host
          + ":"
          + port
          + "/"
          + database
          + (query.isEmpty() ? "" : "?" + query);
    }

    @Override
    public String kind() {
      return "PostgreSQL";
    }

    @Override
    public String address() {
      return host + ":" + port + "/" + database;
    }

    @Override
    public String toString() {
      return "postgres://"
          + user
          + (password == null ? "" : ":***")
          + "@"
          + host
          + ":"
          + port
          + "/"
          + database;
    }
  }

  /** One Redis server (standalone, or the primary of a replicated pair). */
  record Redis(String uri) implements StoreUrl {
    @Override
    public String kind() {
      return "Redis";
    }

    @Override
    public String address() {
      URI parsed = URI.create(uri); // parse() accepted it
      return parsed.getHost() + ":" + (parsed.getPort() < 0 ? 6379 : parsed.getPort());
    }

    @Override
    public String toString() {
      return uri.replaceAll("//[^@/]*@", "//***@");
    }
  }

  /** A Redis Cluster, reached through any of its seed nodes. */
  record RedisCluster(List<String> seeds) implements StoreUrl {
    @Override
    public String kind() {
      return "Redis Cluster";
    }

    @Override
    public String address() {
      return String.join(",", seeds);
    }

    @Override
    public String toString() {
      return "redis-cluster://" + String.join(",", seeds);
    }
  }

  /**
   * Parses {@code text}; an {@link IllegalArgumentException} says what is wrong and which forms
   * work.
   */
  static StoreUrl parse(String text) {
    String s = text.trim();
    if (s.equalsIgnoreCase("embedded")) {
      return new Embedded();
    }
    int colon = s.indexOf("://");
    String scheme = colon < 0 ? "" : s.substring(0, colon).toLowerCase(Locale.ROOT);
    return switch (scheme) {
      case "postgres", "postgresql" -> postgres(s);
      case "redis", "rediss" -> redis(s);
      case "redis-cluster" -> cluster(s, s.substring(colon + 3));
      default ->
          throw new IllegalArgumentException(
              "'" + redact(s) + "' is not a store URL; use " + FORMS);
    };
  }

  private static StoreUrl postgres(String s) {
    URI uri = uri(s);
    String host = uri.getHost();
    if (host == null) {
      throw new IllegalArgumentException(
          "'" + redact(s) + "' has no host; use postgres://user@host:5432/database");
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    if (path.length() < 2 || path.indexOf('/', 1) >= 0) {
      throw new IllegalArgumentException(
          "'" + redact(s) + "' must name one database, as in postgres://user@host:5432/database");
    }
    String info = uri.getRawUserInfo();
    if (info == null || info.isEmpty() || info.startsWith(":")) {
      throw new IllegalArgumentException(
          "'" + redact(s) + "' has no user; use postgres://user[:password]@host:5432/database");
    }
    int sep = info.indexOf(':');
    String user = decode(sep < 0 ? info : info.substring(0, sep));
    String password = sep < 0 ? null : decode(info.substring(sep + 1));
    int port = uri.getPort() < 0 ? 5432 : uri.getPort();
    return new Postgres(
        host,
        port,
        path.substring(1),
        user,
        password,
        uri.getRawQuery() == null ? "" : uri.getRawQuery());
  }

  private static StoreUrl redis(String s) {
    URI uri = uri(s);
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("'" + redact(s) + "' has no host; use redis://host:6379");
    }
    return new Redis(s);
  }

  private static StoreUrl cluster(String s, String rest) {
    List<String> seeds = new ArrayList<>();
    for (String seed : rest.split(",")) {
      String hp = seed.trim();
      int c = hp.lastIndexOf(':');
      if (hp.isEmpty() || c <= 0 || c == hp.length() - 1) {
        throw new IllegalArgumentException(
            "'"
                + redact(s)
                + "': seed '"
                + hp
                + "' must be host:port;"
                + " use redis-cluster://host1:port1,host2:port2");
      }
      port(s, hp.substring(c + 1));
      seeds.add(hp);
    }
    return new RedisCluster(List.copyOf(seeds));
  }

  private static int port(String s, String text) {
    try {
      int p = Integer.parseInt(text);
      if (p >= 1 && p <= 65535) {
        return p;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("'" + redact(s) + "': port '" + text + "' must be 1-65535");
  }

  private static URI uri(String s) {
    try {
      return new URI(s);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "'" + redact(s) + "' is not a valid URL: " + e.getReason());
    }
  }

  private static String decode(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }

  /** The URL without the password, for messages. */
  static String redact(String s) {
    return s.replaceAll("(//[^:@/]*):[^@/]*@", "$1:***@").replaceAll("//:[^@/]*@", "//:***@");
  }
}

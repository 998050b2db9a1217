package dev.once.bench.http;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.servlet.OnceFilter;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.sync.RedisCommands;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.EnumSet;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.jspecify.annotations.Nullable;

/**
 * One Jetty with one context per configuration, all serving the same trivial POST handler, so every
 * configuration runs in the same process, on the same threads and the same JIT.
 */
final class BenchServer implements AutoCloseable {

  private static final byte[] CREATED =
      "{\"payment_id\":\"pay_bench\",\"status\":\"succeeded\"}".getBytes(StandardCharsets.US_ASCII);

  private final Server server = new Server();
  private final ContextHandlerCollection contexts = new ContextHandlerCollection();
  private final ServerConnector connector = new ServerConnector(server);

  BenchServer() {
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(contexts);
  }

  /** The handler alone: reads the body, answers 201 with a small JSON document. */
  BenchServer bare(String contextPath) {
    return context(contextPath, null, new Handler(null, false));
  }

  /** The same handler behind the filter over this engine. */
  BenchServer guarded(String contextPath, Once once) {
    return context(
        contextPath,
        OnceFilter.of(HttpIdempotency.builder(once).build()),
        new Handler(null, false));
  }

  /** The handler plus two {@code SELECT 1} on this pool: the floor of a store's two round trips. */
  BenchServer withRoundTrips(String contextPath, DataSource pool) {
    return context(contextPath, null, new Handler(pool, false));
  }

  /**
   * The handler plus an insert and an update of one row of {@code once_bench_floor}, each committed
   * on its own: the floor of a durable claim and completion (two commits, each waiting for the WAL
   * flush).
   */
  BenchServer withDurableWrites(String contextPath, DataSource pool) {
    return context(contextPath, null, new Handler(pool, true));
  }

  /**
   * The handler plus two {@code SET}s on this Redis connection, one after the other: the floor of
   * the Redis store's claim and completion (two round trips on one shared connection).
   */
  BenchServer withRedisWrites(String contextPath, RedisCommands<String, String> redis) {
    return context(contextPath, null, new RedisHandler(redis));
  }

  private BenchServer context(
      String contextPath, @Nullable OnceFilter filter, HttpServlet handler) {
    ServletContextHandler context = new ServletContextHandler(contextPath);
    if (filter != null) {
      FilterHolder holder = new FilterHolder(filter);
      holder.setAsyncSupported(true);
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
    }
    context.addServlet(new ServletHolder(handler), "/*");
    contexts.addHandler(context);
    return this;
  }

  int start() throws Exception {
    server.start();
    return connector.getLocalPort();
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }

  private static void created(HttpServletResponse resp) throws IOException {
    resp.setStatus(201);
    resp.setContentType("application/json");
    resp.setContentLength(CREATED.length);
    resp.getOutputStream().write(CREATED);
  }

  private static final class RedisHandler extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final AtomicLong KEYS = new AtomicLong();
    private final transient RedisCommands<String, String> redis;

    RedisHandler(RedisCommands<String, String> redis) {
      this.redis = redis;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      req.getInputStream().readAllBytes();
      String key = "once-bench-floor:" + KEYS.incrementAndGet();
      redis.set(key, "claimed", SetArgs.Builder.nx().px(60_000));
      redis.set(key, "completed", SetArgs.Builder.xx().px(60_000));
      created(resp);
    }
  }

  private static final class Handler extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final AtomicLong ROWS = new AtomicLong();
    private final transient @Nullable DataSource pool;
    private final boolean writes;

    Handler(@Nullable DataSource pool, boolean writes) {
      this.pool = pool;
      this.writes = writes;
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      req.getInputStream().readAllBytes();
      if (pool != null) {
        if (writes) {
          String row = Long.toString(ROWS.incrementAndGet());
          statement("INSERT INTO once_bench_floor (k, v) VALUES (?, 0)", row);
          statement("UPDATE once_bench_floor SET v = 1 WHERE k = ?", row);
        } else {
          statement("SELECT 1", null);
          statement("SELECT 1", null);
        }
      }
      created(resp);
    }

    /** One statement on a connection of its own, committed on its own, as each store call is. */
    private void statement(String sql, @Nullable String parameter) throws IOException {
      // Called only when there is a pool (see service).
      try (Connection c = Objects.requireNonNull(pool).getConnection();
          PreparedStatement s = c.prepareStatement(sql)) {
        if (parameter != null) {
          s.setString(1, parameter);
        }
        s.execute();
      } catch (SQLException e) {
        throw new IOException(e);
      }
    }
  }
}

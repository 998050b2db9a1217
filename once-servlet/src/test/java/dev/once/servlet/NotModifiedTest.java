package dev.once.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.http.RoutePolicy;
import dev.once.store.InMemoryStore;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A 304 keeps the fields the application gave it (RFC 9110 §15.4.5: a {@code Content-Length} there
 * is the selected representation's), on the first answer, on a replay and without a key: the filter
 * never invents a {@code Content-Length: 0} (issue 30, item 11, on Jetty 12).
 */
class NotModifiedTest {

  private final AtomicInteger runs = new AtomicInteger();
  private Once once;
  private JettyServer server;

  @BeforeEach
  void start() throws Exception {
    once = Once.of(InMemoryStore.create());
    HttpServlet app =
        new HttpServlet() {
          @Override
          protected void service(HttpServletRequest req, HttpServletResponse resp) {
            runs.incrementAndGet();
            resp.setStatus(304);
            resp.setHeader("ETag", "\"v7\"");
            resp.setHeader("Content-Length", "1234");
          }
        };
    server =
        JettyServer.start(
            OnceFilter.builder(
                    HttpIdempotency.builder(once).route("/**", RoutePolicy.DEFAULTS).build())
                .build(),
            "/",
            app,
            EnumSet.of(DispatcherType.REQUEST));
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
    once.close();
  }

  private RawHttp.Response send(String method, String key) throws Exception {
    List<String> head =
        key == null
            ? List.of(method + " /doc HTTP/1.1", "Host: localhost", "Connection: close")
            : List.of(
                method + " /doc HTTP/1.1",
                "Host: localhost",
                "Connection: close",
                "Idempotency-Key: " + key,
                "Content-Type: application/json",
                "Content-Length: 2");
    return RawHttp.exchange(
        server.port(), head, key == null ? new byte[0] : "{}".getBytes(), false);
  }

  @Test
  void aNotModifiedAnswerKeepsItsFieldsFirstOnReplayAndWithoutAKey() throws Exception {
    RawHttp.Response first = send("POST", "k-304");
    RawHttp.Response replay = send("POST", "k-304");
    RawHttp.Response unkeyed = send("GET", null);

    for (RawHttp.Response r : List.of(first, replay, unkeyed)) {
      assertThat(r.status()).isEqualTo(304);
      assertThat(r.header("ETag")).contains("\"v7\"");
      assertThat(r.body()).isEmpty();
    }
    assertThat(first.header("Content-Length")).contains("1234");
    assertThat(unkeyed.header("Content-Length")).contains("1234");
    // A record never stores a length (the gateway's neither): the replay sends none, never a 0.
    assertThat(replay.header("Content-Length")).isEmpty();
    assertThat(runs).hasValue(2); // the replay did not run
  }
}

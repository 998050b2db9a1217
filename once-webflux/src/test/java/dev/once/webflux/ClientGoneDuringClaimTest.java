package dev.once.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.store.InMemoryStore;
import dev.once.tck.Eventually;
import dev.once.tck.FaultyStore;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.SignalType;

/**
 * A client that goes away while the store is still answering its claim: the claim may still win the
 * key, and nobody will run the handler for it. The lease must be released (no handler ran, so
 * nothing happened), never left in flight for as long as heartbeats run.
 */
class ClientGoneDuringClaimTest {

  private final FaultyStore store = FaultyStore.wrap(InMemoryStore.create());
  private final Once once = Once.of(store);
  private final AtomicInteger runs = new AtomicInteger();
  private final CountDownLatch cancelled = new CountDownLatch(1);
  private WebFluxServer server;

  @AfterEach
  void stop() {
    store.heal();
    if (server != null) {
      server.close();
    }
    once.close();
  }

  @Test
  void aClaimWonAfterTheClientWentAwayIsReleased() throws Exception {
    // Counted once the cancel has gone up the whole chain (doFinally runs after it has), so that
    // the Once filter saw it before the claim is let through; doOnCancel would count it first, and
    // the claim could then win and reach the filter before the cancel did (the handler would run).
    WebFilter seesCancel =
        (exchange, chain) ->
            chain
                .filter(exchange)
                .doFinally(
                    signal -> {
                      if (signal == SignalType.CANCEL) {
                        cancelled.countDown();
                      }
                    });
    server =
        WebFluxServer.start(
            exchange -> {
              runs.incrementAndGet();
              return exchange.getResponse().setComplete();
            },
            seesCancel,
            OnceWebFilter.of(HttpIdempotency.builder(once).build()));
    store.pause(FaultyStore.Call.CLAIM);
    String key = UUID.randomUUID().toString();

    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /api/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: "
                  + key
                  + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      Eventually.assertThat(
          "the claim reached the store",
          Duration.ofSeconds(10),
          () -> store.calls(FaultyStore.Call.CLAIM) == 1);
    }
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).as("the request was cancelled").isTrue();
    store.heal(); // the claim now wins the key, for a request nobody serves any more

    Eventually.assertThat(
        "the unused lease was released",
        Duration.ofSeconds(10),
        () -> store.calls(FaultyStore.Call.RELEASE) == 1);
    assertThat(runs).hasValue(0);
    HttpResponse<String> retry =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/api/orders"))
                    .header("Idempotency-Key", key)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(retry.statusCode()).as("the retry runs, not 409 in flight").isEqualTo(200);
    assertThat(runs).hasValue(1);
  }
}

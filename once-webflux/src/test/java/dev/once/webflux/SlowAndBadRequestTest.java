package dev.once.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.store.InMemoryStore;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * On Reactor Netty, which puts no deadline on a request body, a keyed body that stops coming gets
 * 408 (issue 30, item 15); and a malformed key is refused before the body is asked for, so a client
 * that sent {@code Expect: 100-continue} gets its 400 and never a {@code 100 Continue} (item 14).
 */
@Timeout(60)
class SlowAndBadRequestTest {

  private final AtomicInteger runs = new AtomicInteger();
  private Once once;
  private WebFluxServer server;

  @BeforeEach
  void start() {
    once = Once.of(InMemoryStore.create());
    HttpIdempotency http = HttpIdempotency.builder(once).build();
    server =
        WebFluxServer.start(
            this::handle, OnceWebFilter.builder(http).bodyTimeout(Duration.ofSeconds(1)).build());
  }

  @AfterEach
  void stop() {
    server.close();
    once.close();
  }

  private Mono<Void> handle(ServerWebExchange exchange) {
    runs.incrementAndGet();
    exchange.getResponse().setRawStatusCode(201);
    return exchange.getResponse().setComplete();
  }

  @Test
  void aKeyedBodyThatStopsComingGets408() throws Exception {
    String answer =
        firstBytes(
            "POST /api/payments HTTP/1.1\r\nHost: app\r\nIdempotency-Key: k-slow-1\r\n"
                + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{");

    assertThat(answer).isEqualTo("HTTP/1.1 408");
    assertThat(runs).hasValue(0);
  }

  @Test
  void aMalformedKeyWithExpectContinueIs400WithoutAskingForTheBody() throws Exception {
    String answer =
        firstBytes(
            "POST /api/payments HTTP/1.1\r\nHost: app\r\nIdempotency-Key: bad key\r\n"
                + "Content-Type: application/json\r\nContent-Length: 2\r\n"
                + "Expect: 100-continue\r\n\r\n");

    assertThat(answer).isEqualTo("HTTP/1.1 400");
    assertThat(runs).hasValue(0);
  }

  private String firstBytes(String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(20_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
    }
  }
}

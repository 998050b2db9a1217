package dev.once.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.store.InMemoryStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The guard every test of this module runs under ({@link BlockingCalls}) is real: a handler that
 * blocks on Reactor Netty's event loop, behind the filter, is caught.
 */
class BlockHoundGuardTest {

  @Test
  void aHandlerThatBlocksOnTheEventLoopIsCaught() throws Exception {
    try (Once once = Once.of(InMemoryStore.create());
        WebFluxServer server =
            WebFluxServer.start(
                exchange ->
                    Mono.fromRunnable(
                        () -> {
                          try {
                            Thread.sleep(1); // on the event loop: the in-memory store answered
                          } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                          }
                        }),
                OnceWebFilter.of(HttpIdempotency.builder(once).build()))) {
      HttpResponse<String> response =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(server.base() + "/api/payments"))
                      .timeout(Duration.ofSeconds(20))
                      .header("Idempotency-Key", UUID.randomUUID().toString())
                      .POST(HttpRequest.BodyPublishers.ofString("{}"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());

      assertThat(response.statusCode()).isEqualTo(500);
      assertThat(BlockingCalls.drain())
          .singleElement()
          .asString()
          .startsWith("java.lang.Thread.sleep")
          .contains("reactor-http");
    }
  }
}

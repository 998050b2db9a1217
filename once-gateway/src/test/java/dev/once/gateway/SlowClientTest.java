package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Clients that send their bodies a byte at a time hold no thread: the proxy and /health still answer. */
@Timeout(120)
class SlowClientTest {

  static final int SLOW_CLIENTS = 300;

  @Test
  void threeHundredTricklingClientsStopNeitherTheProxyNorHealth() throws Exception {
    List<Socket> slow = new ArrayList<>();
    try (TestGateway gw = TestGateway.start("--request-body-timeout", "60s")) {
      try {
        for (int i = 0; i < SLOW_CLIENTS; i++) {
          Socket s = new Socket("127.0.0.1", gw.gateway.port());
          slow.add(s);
          s.getOutputStream().write(("POST /payments/trickle-" + i + " HTTP/1.1\r\nHost: gateway\r\nApi-Key: " + Client.MERCHANT
              + "\r\nIdempotency-Key: " + key() + "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
              .getBytes(StandardCharsets.US_ASCII));
        }
        trickle(slow);

        long start = System.nanoTime();
        HttpResponse<String> normal = gw.client.postJson("/payments/normal", key(), "{}");
        HttpResponse<String> health = gw.management().get("/health");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        trickle(slow);

        assertThat(normal.statusCode()).isEqualTo(201);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(took).isLessThan(Duration.ofSeconds(5));
        assertThat(gw.upstream.runs("/payments/trickle-0")).isZero();
      } finally {
        for (Socket s : slow) {
          s.close();
        }
      }
    }
  }

  /** One more byte from every slow client. */
  private static void trickle(List<Socket> slow) throws IOException {
    for (Socket s : slow) {
      s.getOutputStream().write(' ');
    }
  }
}

package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Responses over the route's cap stream to the client, and count as done however the stream ends.
 */
class StreamingTest extends GatewayTest {

  @Test
  void aClientThatHangsUpDuringAStreamedResponseLeavesTheKeyDoneWithItsResponseUnavailable()
      throws Exception {
    String key = key();
    String path = "/small/big/" + (256 << 20);
    try (Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.getOutputStream().write(Client.rawPost(path, key, 2, "{}"));
      InputStream in = socket.getInputStream();
      assertThat(new String(in.readNBytes(12), StandardCharsets.US_ASCII))
          .isEqualTo("HTTP/1.1 200");
      in.readNBytes(1 << 20);
      socket.setSoLinger(true, 0); // hang up hard, with most of the body unread
    }

    HttpResponse<String> retry = retryUntilSettled(path, key);

    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(gw.upstream.runs(path)).isEqualTo(1);
  }

  /**
   * The retry once the first exchange has been settled (it is settled as soon as the hang-up is
   * seen).
   */
  private HttpResponse<String> retryUntilSettled(String path, String key) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    HttpResponse<String> retry = client.postJson(path, key, "{}");
    while (retry.body().contains(ProblemType.IN_FLIGHT.slug()) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      retry = client.postJson(path, key, "{}");
    }
    return retry;
  }
}

package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.tck.Eventually;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connections that declare large bodies and send little cannot take the buffer budget from honest
 * requests (issue 30, item 7): a body is counted as its bytes arrive, so an honest request is
 * admitted and its small response stored (replayed on retry), not streamed for want of budget.
 */
@Timeout(60)
class BudgetStarvationTest {

  @Test
  void idleHeadsDeclaringLargeBodiesLeaveTheBudgetToHonestRequests() throws Exception {
    try (TestGateway gw =
        TestGateway.start("--max-buffered-bytes", "8MiB", "--request-body-timeout", "30s")) {
      List<Socket> heads = new ArrayList<>();
      try {
        for (int i = 0; i < 10; i++) {
          Socket socket = new Socket("127.0.0.1", gw.gateway.port());
          socket.getOutputStream().write(Client.rawPost("/large/idle", key(), 4 << 20, "{"));
          heads.add(socket);
        }
        // One byte each has arrived: the gauge shows them held, and nothing more.
        Eventually.assertThat(
            "the heads' first bytes are held", Duration.ofSeconds(10), () -> buffered(gw) >= 10);

        HttpResponse<String> honest = gw.client.postJson("/payments/honest", key(), "{}");

        assertThat(honest.statusCode()).isEqualTo(201);
        assertThat(buffered(gw)).isLessThan(1 << 20);
      } finally {
        for (Socket socket : heads) {
          socket.close();
        }
      }
    }
  }

  @Test
  void aBodyDeclaringTheWholeBudgetHoldsOnlyWhatArrivedAndSmallResponsesAreStillStored()
      throws Exception {
    try (TestGateway gw =
            TestGateway.start("--max-buffered-bytes", "1MiB", "--request-body-timeout", "30s");
        Socket slow = new Socket("127.0.0.1", gw.gateway.port())) {
      // 300 KiB of a body that declares the whole budget: what arrived is held, the rest never
      // comes.
      slow.getOutputStream()
          .write(Client.rawPost("/large/part", key(), 1 << 20, "x".repeat(300 << 10)));
      Eventually.assertThat(
          "the part sent is held", Duration.ofSeconds(10), () -> buffered(gw) >= 300 << 10);
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/big/200000", key, "{}");
      HttpResponse<String> retry = gw.client.postJson("/big/200000", key, "{}");

      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).hasSize(200_000);
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(gw.upstream.runs("/big/200000")).isEqualTo(1);
    }
  }

  /**
   * One client cannot take the requests' share of the budget by opening many connections (issue 30,
   * item 7): its bodies together hold at most max-buffered-bytes-per-client, so a body from another
   * client is still admitted. Both come through a trusted proxy, which names them.
   */
  @Test
  void oneClientsManyConnectionsLeaveTheBudgetToAnotherClient() throws Exception {
    try (TestGateway gw =
        TestGateway.start(
            "--max-buffered-bytes", "2MiB",
            "--max-buffered-bytes-per-client", "512KiB",
            "--trusted-proxies", "127.0.0.1",
            "--request-body-timeout", "30s")) {
      List<Socket> heavy = new ArrayList<>();
      try {
        for (int i = 0; i < 6; i++) {
          Socket socket = new Socket("127.0.0.1", gw.gateway.port());
          socket
              .getOutputStream()
              .write(
                  Client.rawPost(
                      "/large/heavy",
                      key(),
                      1 << 20,
                      "x".repeat(300 << 10),
                      "X-Forwarded-For: 198.51.100.7"));
          heavy.add(socket);
        }
        // What the heavy client may hold has arrived; the rest of its bodies are refused.
        Eventually.assertThat(
            "the heavy client's share is held",
            Duration.ofSeconds(10),
            () -> buffered(gw) >= 300 << 10);

        HttpResponse<String> other =
            gw.client.postJson(
                "/large/other",
                key(),
                "{\"pad\":\"" + "y".repeat(400 << 10) + "\"}",
                "X-Forwarded-For",
                "198.51.100.8");

        assertThat(other.statusCode()).isEqualTo(201);
        assertThat(buffered(gw)).isLessThanOrEqualTo(512 << 10);
      } finally {
        for (Socket socket : heavy) {
          socket.close();
        }
      }
    }
  }

  private static long buffered(TestGateway gw) {
    try {
      return Client.bufferedBytes(gw.management());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}

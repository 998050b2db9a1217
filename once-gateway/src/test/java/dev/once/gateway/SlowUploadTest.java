package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A slow upload without a key cannot hold an upstream connection (issue 30, item 8): a body that
 * fits the route's request limit is read whole before the request goes upstream, under the same
 * deadline as a keyed one, so a client trickling it holds a buffer, never a connection to the
 * upstream, and gets 408 when its time is up.
 */
@Timeout(60)
class SlowUploadTest {

  @Test
  void aTricklingUploadWithoutAKeyLeavesTheOnlyUpstreamConnectionToOthers() throws Exception {
    try (TestGateway gw =
            TestGateway.start(
                "--upstream-max-connections", "1",
                "--upstream-timeout", "40s",
                "--request-body-timeout", "30s");
        Socket trickle = new Socket("127.0.0.1", gw.gateway.port())) {
      trickle.getOutputStream().write(Client.rawPost("/payments/trickle", null, 100, "{"));

      // The client's own timeout (30 s) is shorter than the upload may take to run out (40 s).
      HttpResponse<String> honest = gw.client.postJson("/payments/honest", null, "{}");

      assertThat(honest.statusCode()).isEqualTo(201);
      assertThat(gw.upstream.runs("/payments/trickle")).isZero();
    }
  }

  /**
   * A chunked body is not read first: it streams, and holds the upstream connection while it does.
   * Falling behind {@code min-request-data-rate} after the grace cuts it (408) and frees the
   * connection, long before {@code upstream-timeout} would.
   */
  @Test
  void aTricklingChunkedUploadIsCutWhenItFallsBehindAndFreesTheUpstreamConnection()
      throws Exception {
    try (TestGateway gw =
            TestGateway.start(
                "--upstream-max-connections", "1",
                "--upstream-timeout", "60s",
                "--request-body-timeout", "1s",
                "--min-request-data-rate", "1KiB");
        Socket trickle = new Socket("127.0.0.1", gw.gateway.port())) {
      trickle.setSoTimeout(30_000);
      OutputStream out = trickle.getOutputStream();
      out.write(
          ("POST /payments/trickle HTTP/1.1\r\nHost: gateway\r\nApi-Key: "
                  + Client.MERCHANT
                  + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      long start = System.nanoTime();
      Thread sender =
          new Thread(
              () -> {
                // One byte every 200 ms, for at most 40 s: far below 1 KiB a second.
                try {
                  for (int i = 0; i < 200; i++) {
                    out.write("1\r\n{\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    Thread.sleep(200);
                  }
                } catch (IOException | InterruptedException cut) {
                  // the gateway closed the connection: expected
                }
              });
      sender.setDaemon(true);
      sender.start();

      String answer =
          new String(trickle.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      sender.interrupt();

      assertThat(answer).isEqualTo("HTTP/1.1 408");
      // Cut after its grace and a byte's worth of pace, not after upstream-timeout.
      assertThat(took).isLessThan(Duration.ofSeconds(20));
      HttpResponse<String> honest = gw.client.postJson("/payments/honest", null, "{}");
      // The honest request needed the only upstream connection: the cut upload gave it back.
      assertThat(honest.statusCode()).isEqualTo(201);
    }
  }

  @Test
  void aTricklingUploadWithoutAKeyGets408AndNeverReachesTheUpstream() throws Exception {
    try (TestGateway gw = TestGateway.start("--request-body-timeout", "1s");
        Socket trickle = new Socket("127.0.0.1", gw.gateway.port())) {
      trickle.setSoTimeout(20_000);
      trickle.getOutputStream().write(Client.rawPost("/payments/trickle", null, 100, "{"));

      InputStream in = trickle.getInputStream();
      String answer = new String(in.readNBytes(12), StandardCharsets.US_ASCII);

      assertThat(answer).isEqualTo("HTTP/1.1 408");
      assertThat(gw.upstream.runs("/payments/trickle")).isZero();
    }
  }
}

package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
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

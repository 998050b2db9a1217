package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ambiguous-failure rule: a failure before the request reached the upstream releases the key; a
 * failure after it was sent keeps the key in progress until its lease ends, so a retry cannot run
 * an effect twice that may already have happened.
 */
class UpstreamFailureTest extends GatewayTest {

  @Test
  void anUpstreamTimeoutAfterTheRequestWasSentKeepsTheKeyInFlight() throws Exception {
    String key = key();

    HttpResponse<String> first = client.postJson("/slow/3000", key, "{}");
    HttpResponse<String> retry = client.postJson("/slow/3000", key, "{}");

    assertProblem(first, 504, "upstream-timeout");
    assertProblem(retry, ProblemType.IN_FLIGHT);
    assertThat(gw.upstream.runs("/slow/3000")).isEqualTo(1);
  }

  @Test
  void aConnectionDroppedAfterTheRequestWasSentKeepsTheKeyInFlight() throws Exception {
    String key = key();

    HttpResponse<String> first = client.postJson("/reset", key, "{}");
    HttpResponse<String> retry = client.postJson("/reset", key, "{}");

    assertProblem(first, 502, "upstream-failed");
    assertProblem(retry, ProblemType.IN_FLIGHT);
    assertThat(gw.upstream.runs("/reset")).isEqualTo(1);
  }

  @Test
  void onceTheLeaseOfAnAbandonedKeyEndsARetryRunsAgain() throws Exception {
    String key = key();
    assertProblem(client.postJson("/short-lease/slow/2000", key, "{}"), 504, "upstream-timeout");
    Thread.sleep(1200); // the 1 s lease has ended without a heartbeat

    HttpResponse<String> retry = client.postJson("/short-lease/slow/10", key, "{}");

    // Another path is another request: the same path after the lease would time out again.
    assertProblem(retry, ProblemType.KEY_REUSED);
    HttpResponse<String> sameRequest = client.postJson("/short-lease/slow/2000", key, "{}");
    assertProblem(sameRequest, 504, "upstream-timeout");
    assertThat(gw.upstream.runs("/short-lease/slow/2000"))
        .as("the stolen lease ran the request again")
        .isEqualTo(2);
  }

  @Test
  void strayBytesLeftOnAPooledConnectionMakeTheNextRequestAmbiguousSoNoKeyEverRunsTwice()
      throws Exception {
    // A complete answer with an empty body; five stray bytes arrive late, once the connection is
    // back in the pool, and break the next exchange on it: that request was sent, so its outcome is
    // unknown. (After a 204 or 304 that announces a body the connection is not reused at all: see
    // UpstreamFidelityTest.)
    try (RawUpstream upstream =
            new RawUpstream("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "hello");
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      List<Integer> statuses = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        String key = key();

        HttpResponse<String> first = gw.client.postJson("/payments/stray", key, "{}");
        HttpResponse<String> retry = gw.client.postJson("/payments/stray", key, "{}");

        statuses.add(first.statusCode());
        assertThat(upstream.runs(key)).as("runs of key %d", i).isEqualTo(1);
        if (first.statusCode() == 200) {
          assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        } else {
          assertProblem(first, 502, "upstream-failed");
          assertThat(first.body()).doesNotContain("safe");
          assertProblem(retry, ProblemType.IN_FLIGHT);
        }
      }
      assertThat(statuses).as("some request met the stray bytes").contains(200, 502);
    }
  }

  @Test
  void anUpstreamThatResetsWhileTheRequestIsStillBeingWrittenHadItSoTheKeyStaysInFlight()
      throws Exception {
    // The body is larger than the socket buffers, so the gateway is still writing it when the
    // upstream, which has read the head, resets: the request left the gateway, unfinished.
    try (RawUpstream upstream = RawUpstream.resettingAfterTheHead();
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      String key = key();
      String body = "{\"pad\":\"" + "x".repeat(24 << 20) + "\"}";

      HttpResponse<String> first = gw.client.postJson("/large/payments", key, body);
      HttpResponse<String> retry = gw.client.postJson("/large/payments", key, body);

      assertProblem(first, 502, "upstream-failed");
      assertThat(first.body()).doesNotContain("safe");
      assertProblem(retry, ProblemType.IN_FLIGHT);
      assertThat(upstream.runs(key)).isEqualTo(1);
    }
  }

  @Test
  void anUpstreamThatCannotBeReachedReleasesTheKey() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    try (TestGateway down = TestGateway.start("--upstream", "http://127.0.0.1:" + closedPort)) {
      String key = key();

      HttpResponse<String> first = down.client.postJson("/payments", key, "{}");
      HttpResponse<String> retry = down.client.postJson("/payments", key, "{}");

      assertProblem(first, 502, "upstream-unreachable");
      assertProblem(retry, 502, "upstream-unreachable");
    }
  }
}

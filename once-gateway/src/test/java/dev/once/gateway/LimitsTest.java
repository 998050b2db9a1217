package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gateway's limits, each with the answer it promises: header sizes consistent on every hop, the
 * response cap on the body only, a deadline on request bodies, and a cap on all bytes held.
 */
@Timeout(60)
class LimitsTest {

  @Test
  void requestHeadersUnderTheLimitReachTheUpstream() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      HttpResponse<String> response =
          gw.client.postJson(
              "/payments/big-request-headers", key(), "{}", "X-Big", "b".repeat(6000));

      assertThat(response.statusCode()).isEqualTo(201);
      assertThat(gw.upstream.runs("/payments/big-request-headers")).isEqualTo(1);
    }
  }

  @Test
  void upstreamResponseHeadersOverTheLimitAreNeverRecordedAsASuccess() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/fat-headers/10000", key, "{}");
      HttpResponse<String> retry = gw.client.postJson("/fat-headers/10000", key, "{}");

      assertProblem(first, 502, "upstream-headers-too-large");
      assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
      assertThat(gw.upstream.runs("/fat-headers/10000")).isEqualTo(1);
    }
  }

  @Test
  void theHeaderLimitIsConfiguredOnceForEveryHop() throws Exception {
    try (TestGateway gw = TestGateway.start("--max-header-bytes", "24KiB")) {
      String key = key();

      HttpResponse<String> first =
          gw.client.postJson("/fat-headers/12000", key, "{}", "X-Big", "b".repeat(12000));
      HttpResponse<String> replay =
          gw.client.postJson("/fat-headers/12000", key, "{}", "X-Big", "b".repeat(12000));

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(first.headers().firstValue("X-Fat"))
          .hasValueSatisfying(v -> assertThat(v).hasSize(12000));
      assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(replay.headers().firstValue("X-Fat"))
          .isEqualTo(first.headers().firstValue("X-Fat"));
    }
  }

  @Test
  void theResponseCapCountsTheBodyNotTheHeaders() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/small/big/4096", key, "{}");
      HttpResponse<String> replay = gw.client.postJson("/small/big/4096", key, "{}");

      assertThat(first.body()).hasSize(4096);
      assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(replay.body()).isEqualTo(first.body());
    }
  }

  @Test
  void aClientThatStallsMidBodyGets408AndNothingRuns() throws Exception {
    try (TestGateway gw = TestGateway.start("--request-body-timeout", "1s");
        Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(Client.rawPost("/payments/stalled", key(), 10, "{\"a\""));

      String response =
          new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);

      assertThat(response)
          .startsWith("HTTP/1.1 408 ")
          .contains("application/problem+json")
          .contains("request-body-timeout");
      assertThat(gw.upstream.runs("/payments/stalled")).isZero();
    }
  }

  /**
   * A refusal that needs no body (here: no key on a route that requires one) is answered before the
   * body has arrived. That connection cannot carry another request, and the answer must say so:
   * without {@code Connection: close} a client reuses it and its next request gets an empty reply.
   */
  @Test
  void anAnswerGivenBeforeTheBodyArrivedSaysTheConnectionCloses() throws Exception {
    try (TestGateway gw = TestGateway.start();
        Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(Client.rawPost("/required/x", null, 20, ""));

      String head = headOf(socket.getInputStream());

      assertThat(head)
          .startsWith("HTTP/1.1 400 ")
          .containsIgnoringCase("\r\nConnection: close\r\n");
      assertThat(gw.upstream.runs("/required/x")).isZero();
    }
  }

  @Test
  void aBodyOverTheGatewaysBufferCapIs503AndNothingRuns() throws Exception {
    try (TestGateway gw = TestGateway.start("--max-buffered-bytes", "64KiB")) {
      HttpResponse<String> response =
          gw.client.postJson(
              "/payments/over-budget", key(), "{\"pad\":\"" + "x".repeat(100_000) + "\"}");

      assertProblem(response, 503, "gateway-overloaded");
      assertThat(response.headers().firstValue("Retry-After")).isPresent();
      assertThat(gw.upstream.runs("/payments/over-budget")).isZero();
    }
  }

  @Test
  void aResponseOverTheGatewaysBufferCapStreamsWholeAndCountsAsDone() throws Exception {
    try (TestGateway gw = TestGateway.start("--max-buffered-bytes", "64KiB")) {
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/big/200000", key, "{}");
      HttpResponse<String> retry = gw.client.postJson("/big/200000", key, "{}");

      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).hasSize(200_000);
      assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
      assertThat(gw.upstream.runs("/big/200000")).isEqualTo(1);
    }
  }

  /**
   * The status line and header fields of the response arriving on {@code in}, up to the blank line.
   */
  private static String headOf(java.io.InputStream in) throws java.io.IOException {
    StringBuilder head = new StringBuilder();
    while (head.indexOf("\r\n\r\n") < 0) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.append((char) b);
    }
    return head.toString();
  }
}

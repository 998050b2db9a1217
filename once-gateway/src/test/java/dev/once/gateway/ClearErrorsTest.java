package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Clear errors (issue 30, item 14): a malformed body is the client's fault (400 problem, never a
 * 502 blaming the upstream nor Jetty's HTML page), so is a request Jetty refuses itself, {@code
 * OPTIONS *} is answered, a malformed key with {@code Expect: 100-continue} is refused before the
 * client is asked for its body, and no query string reaches a WARN line.
 */
@Timeout(60)
class ClearErrorsTest {

  private static final String BAD_CHUNKED_BODY =
      "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n";

  @Test
  void aMalformedBodyWithoutAKeyIs400NotAnUpstreamFailure() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String answer = exchange(gw, "POST /payments/bad HTTP/1.1\r\nHost: g\r\n" + BAD_CHUNKED_BODY);

      assertThat(answer).startsWith("HTTP/1.1 400 ").contains("application/problem+json");
    }
  }

  @Test
  void aMalformedBodyWithAKeyIsAProblemNotJettysPage() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String answer =
          exchange(
              gw,
              "POST /payments/bad HTTP/1.1\r\nHost: g\r\nIdempotency-Key: "
                  + key()
                  + "\r\n"
                  + BAD_CHUNKED_BODY);

      assertThat(answer).startsWith("HTTP/1.1 400 ").contains("application/problem+json");
    }
  }

  /**
   * What Jetty refuses before the gateway sees the request (a malformed request line, header fields
   * over the limit) is a problem too, for any method, not Jetty's HTML page ({@link
   * ProblemErrors}).
   */
  @Test
  void aRequestJettyRefusesIsAProblemNotJettysPage() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String badLine = exchange(gw, "PO{ST /payments/x HTTP/1.1\r\nHost: g\r\n\r\n");
      String tooLarge =
          exchange(
              gw,
              "PUT /payments/x HTTP/1.1\r\nHost: g\r\nX-Big: " + "a".repeat(70_000) + "\r\n\r\n");

      assertThat(badLine)
          .startsWith("HTTP/1.1 400 ")
          .containsIgnoringCase("Content-Type: application/problem+json");
      assertThat(tooLarge)
          .startsWith("HTTP/1.1 431 ")
          .containsIgnoringCase("Content-Type: application/problem+json");

      // HEAD: the same head, and no content after it (RFC 9110 §9.3.2).
      String headAnswer =
          untilClosed(
              gw,
              "HEAD /payments/x HTTP/1.1\r\nHost: g\r\nX-Big: " + "a".repeat(70_000) + "\r\n\r\n");
      assertThat(headAnswer)
          .startsWith("HTTP/1.1 431 ")
          .containsIgnoringCase("Content-Type: application/problem+json")
          .endsWith("\r\n\r\n");
    }
  }

  @Test
  void optionsOfTheWholeServerIsAnsweredByTheGateway() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String answer = exchange(gw, "OPTIONS * HTTP/1.1\r\nHost: g\r\n\r\n");

      assertThat(answer).startsWith("HTTP/1.1 200 ").containsIgnoringCase("Allow: GET");
    }
  }

  @Test
  void aMalformedKeyWithExpectContinueIs400WithoutAskingForTheBody() throws Exception {
    try (TestGateway gw = TestGateway.start();
        Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              ("POST /payments/x HTTP/1.1\r\nHost: g\r\nIdempotency-Key: bad key\r\n"
                      + "Content-Type: application/json\r\nContent-Length: 2\r\n"
                      + "Expect: 100-continue\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));

      String first = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);

      assertThat(first).isEqualTo("HTTP/1.1 400");
      assertThat(gw.upstream.runs("/payments/x")).isZero();
    }
  }

  @Test
  void aQueryStringNeverReachesAWarnLine() throws Exception {
    try (RecordingOutput output = new RecordingOutput();
        RawUpstream resetting = RawUpstream.resettingAfterTheHead();
        TestGateway gw = TestGateway.start("--upstream", resetting.url())) {
      gw.client.postJson("/payments/x?token=s3cr3t-in-query", null, "{}");
      gw.client.postJson("/payments/y?token=s3cr3t-in-query", key(), "{}");
      exchange(
          gw, "POST /payments/z?token=s3cr3t-in-query HTTP/1.1\r\nHost: g\r\n" + BAD_CHUNKED_BODY);

      assertThat(output.text()).contains("WARN").doesNotContain("s3cr3t-in-query");
    }
  }

  /** Writes {@code request} on a fresh connection and reads what comes back until it closes. */
  /** The whole answer to {@code request}, read until the gateway closes the connection. */
  private static String untilClosed(TestGateway gw, String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  private static String exchange(TestGateway gw, String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      InputStream in = socket.getInputStream();
      byte[] head = new byte[4096];
      int n = 0;
      // Enough of the answer for its status line and fields; the gateway may keep the connection.
      while (n < head.length) {
        int r;
        try {
          r = in.read(head, n, head.length - n);
        } catch (java.net.SocketTimeoutException e) {
          break;
        }
        if (r < 0) {
          break;
        }
        n += r;
        if (new String(head, 0, n, StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
          break;
        }
      }
      return new String(head, 0, n, StandardCharsets.ISO_8859_1);
    }
  }
}

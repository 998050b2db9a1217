package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static dev.once.servlet.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The filter reads the body to fingerprint it; the handler must still get all of it, and no more
 * than the limit is read.
 */
class RequestBodyTest extends GuardedAppTest {

  @Test
  void theHandlerReadsTheWholeBodyTheFilterRead() throws Exception {
    String body = "{\"amount\":1000,\"note\":\"" + "n".repeat(50_000) + "\"}";

    HttpResponse<String> r = shop.postJson("/api/payments/body", key(), body);

    assertThat(r.body()).contains("\"received_bytes\":" + body.length());
  }

  @Test
  void theHandlerCanReadTheBodyAsCharacters() throws Exception {
    HttpResponse<String> r =
        shop.send(
            shop.post("/api/reader", key(), "")
                .header("Content-Type", "text/plain; charset=UTF-8")
                .POST(HttpRequest.BodyPublishers.ofString("Grüße € ✓", StandardCharsets.UTF_8)));

    assertThat(r.body()).isEqualTo("Grüße € ✓");
  }

  @Test
  void formParametersStillComeFromTheBodyAfterTheQuery() throws Exception {
    String key = key();
    HttpRequest.Builder form =
        HttpRequest.newBuilder(shop.uri("/api/form?b=query"))
            .header("Idempotency-Key", key)
            .header("Api-Key", GuardedApp.MERCHANT)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString("a=1&b=body&c=%E2%82%AC+x"));

    HttpResponse<String> first = shop.send(form);
    HttpResponse<String> retry = shop.send(form);

    assertThat(first.body()).isEqualTo("a=1&b=query,body&c=€ x");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void aBodyOverTheLimitIs413AndNeverReachesTheHandler() throws Exception {
    HttpResponse<String> r =
        shop.postJson("/small/api/payments", key(), "{\"a\":\"" + "x".repeat(1100) + "\"}");

    assertProblem(r, ProblemType.BODY_TOO_LARGE);
    assertThat(r.body()).contains("1024 bytes");
    assertThat(shop.app.executions("/small/api/payments")).isZero();
  }

  @Test
  void aBodyOfExactlyTheLimitIsAccepted() throws Exception {
    HttpResponse<String> r = shop.postJson("/small/api/payments/exact", key(), "x".repeat(1024));

    assertThat(r.statusCode()).isEqualTo(201);
  }

  @Test
  void aDeclaredLengthOverTheLimitIsRefusedBeforeTheBodyIsSent() throws Exception {
    int claims = shop.store.claimedIds();

    RawHttp.Response r =
        RawHttp.headOnly(
            shop.server.port(),
            List.of(
                "POST /small/api/payments/declared HTTP/1.1",
                "Host: localhost",
                "Content-Type: application/json",
                "Idempotency-Key: " + key(),
                "Content-Length: 10000000"));

    assertProblem(r, ProblemType.BODY_TOO_LARGE);
    assertThat(r.header("Connection")).contains("close");
    assertThat(shop.store.claimedIds()).isEqualTo(claims);
  }

  @Test
  void aRequestRefusedForAMissingKeyBeforeItsBodyArrivedClosesTheConnection() throws Exception {
    // The JDK client sends the head and the body in two writes; a refusal sent in between left the
    // body unread, and a client that pooled the connection sent its next request into a closed
    // socket.
    RawHttp.Response r =
        RawHttp.headOnly(
            shop.server.port(),
            List.of(
                "POST /required/api/payments HTTP/1.1",
                "Host: localhost",
                "Content-Type: application/json",
                "Content-Length: 2"));

    assertProblem(r, ProblemType.KEY_MISSING);
    assertThat(r.header("Connection")).contains("close");
  }

  @Test
  void aChunkedBodyIsCutOffOneByteAfterTheLimit() throws Exception {
    // One chunk of limit + 1 bytes, and the body never ends: the answer must not wait for the rest.
    String chunk = "x".repeat(1025);
    byte[] endless =
        (Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n")
            .getBytes(StandardCharsets.US_ASCII);

    RawHttp.Response r =
        RawHttp.exchange(
            shop.server.port(),
            List.of(
                "POST /small/api/payments/chunked HTTP/1.1",
                "Host: localhost",
                "Content-Type: application/json",
                "Idempotency-Key: " + key(),
                "Transfer-Encoding: chunked"),
            endless,
            false);

    assertProblem(r, ProblemType.BODY_TOO_LARGE);
    assertThat(shop.app.executions("/small/api/payments/chunked")).isZero();
  }

  @Test
  void withoutAKeyTheBodyIsNotBufferedNorLimited() throws Exception {
    HttpResponse<String> r = shop.postJson("/small/api/payments/nokey", null, "x".repeat(5000));

    assertThat(r.statusCode()).isEqualTo(201);
    assertThat(r.body()).contains("\"received_bytes\":5000");
  }

  @Test
  void multipartBodiesCannotBeParsedAfterBufferingAndTheHandlerIsToldWhy() throws Exception {
    HttpResponse<String> r =
        shop.send(
            HttpRequest.newBuilder(shop.uri("/api/parts"))
                .header("Idempotency-Key", key())
                .header("Api-Key", GuardedApp.MERCHANT)
                .header("Content-Type", "multipart/form-data; boundary=b")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--\r\n")));

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(shop.app.lastFailure())
        .contains("multipart bodies cannot be parsed after OnceFilter buffered them");
  }
}

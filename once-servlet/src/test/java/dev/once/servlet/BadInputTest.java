package dev.once.servlet;

import static dev.once.servlet.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed and hostile requests, as bytes on a socket. Each one gets a clear answer (an RFC 9457
 * problem from the filter, or the container's own 4xx before the filter runs) and leaves no record
 * behind; the few that are accepted on purpose are documented in docs/http.md.
 */
class BadInputTest extends GuardedAppTest {

  /**
   * One row of the table.
   *
   * @param problem the filter's problem type, or null when the container answers before the filter
   * @param runs whether the handler runs (documented behaviour), leaving a completed record
   */
  record Case(
      String name,
      List<String> head,
      byte[] body,
      boolean closeOutput,
      int status,
      ProblemType problem,
      boolean runs) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static List<String> post(String path, String... headers) {
    List<String> head = new ArrayList<>();
    head.add("POST " + path + " HTTP/1.1");
    head.add("Host: localhost");
    head.add("Connection: close");
    head.add("Api-Key: sk_bad_input");
    head.addAll(List.of(headers));
    return head;
  }

  private static List<String> json(String path, String key, int length, String... more) {
    List<String> head = post(path, "Content-Type: application/json", "Content-Length: " + length);
    if (key != null) {
      head.add("Idempotency-Key: " + key);
    }
    head.addAll(List.of(more));
    return head;
  }

  private static Case rejected(
      String name, List<String> head, String body, int status, ProblemType problem) {
    return new Case(
        name, head, body.getBytes(StandardCharsets.UTF_8), false, status, problem, false);
  }

  private static Case keyInvalid(String name, String keyHeaderValue) {
    return rejected(
        name, json("/api/payments", keyHeaderValue, 2), "{}", 400, ProblemType.KEY_INVALID);
  }

  private static Case accepted(String name, String contentType, byte[] body) {
    return new Case(
        name,
        post(
            "/api/payments",
            "Content-Type: " + contentType,
            "Content-Length: " + body.length,
            "Idempotency-Key: " + UUID.randomUUID()),
        body,
        false,
        201,
        null,
        true);
  }

  static Stream<Case> cases() {
    String pad = "X-Pad: " + "p".repeat(100);
    List<String> manyHeaders = json("/api/payments", UUID.randomUUID().toString(), 2);
    for (int i = 0; i < 200; i++) {
      manyHeaders.add(pad);
    }
    return Stream.of(
        keyInvalid("an empty key", ""),
        keyInvalid("a key of 256 characters", "k".repeat(256)),
        keyInvalid("a key with a space inside", "pay ment"),
        keyInvalid("a key with a tab inside", "pay\tment"),
        keyInvalid("a key with non-ASCII letters", "ключ-оплаты"),
        keyInvalid("an unterminated sf-string", "\"abc"),
        keyInvalid("an sf-string with an invalid escape", "\"a\\qb\""),
        keyInvalid("an empty sf-string", "\"\""),
        keyInvalid("an sf-string with parameters", "\"abc\";v=1"),
        keyInvalid("a list of two keys in one header", "k-1, k-2"),
        rejected(
            "two Idempotency-Key headers",
            json("/api/payments", "k-1", 2, "Idempotency-Key: k-2"),
            "{}",
            400,
            ProblemType.KEY_INVALID),
        rejected(
            "no key on a route that requires one",
            json("/required/api/payments", null, 2),
            "{}",
            400,
            ProblemType.KEY_MISSING),
        rejected(
            "a percent-encoded spelling of a required route",
            json("/required/api/%70ayments", null, 2),
            "{}",
            400,
            ProblemType.KEY_MISSING),
        rejected(
            "dot segments leading into a required route",
            json("/x/../required/api/payments", null, 2),
            "{}",
            400,
            ProblemType.KEY_MISSING),
        rejected(
            "a key header of 9000 characters",
            json("/api/payments", "k".repeat(9000), 2),
            "{}",
            431,
            null),
        rejected("a header section of 20 KiB", manyHeaders, "{}", 431, null),
        rejected(
            "a body longer than the route allows",
            json("/small/api/payments", "k-413", 1100),
            "x".repeat(1100),
            413,
            ProblemType.BODY_TOO_LARGE),
        rejected(
            "a non-numeric Content-Length",
            post("/api/payments", "Idempotency-Key: k-cl", "Content-Length: twelve"),
            "{}",
            400,
            null),
        rejected(
            "two different Content-Length values",
            post(
                "/api/payments",
                "Idempotency-Key: k-cl2",
                "Content-Length: 2",
                "Content-Length: 3"),
            "{}",
            400,
            null),
        rejected(
            "Content-Length with Transfer-Encoding",
            post(
                "/api/payments",
                "Idempotency-Key: k-te",
                "Content-Length: 2",
                "Transfer-Encoding: chunked"),
            "2\r\n{}\r\n0\r\n\r\n",
            400,
            null),
        rejected(
            "a malformed chunk size",
            post("/api/payments", "Idempotency-Key: k-chunk", "Transfer-Encoding: chunked"),
            "zz\r\n{}\r\n0\r\n\r\n",
            400,
            null),
        new Case(
            "a body shorter than its Content-Length, then the client hangs up",
            json("/api/payments", "k-short", 100),
            "{\"amount\":".getBytes(StandardCharsets.UTF_8),
            true,
            -1,
            null,
            false),
        accepted(
            "invalid JSON, hashed raw",
            "application/json",
            "{\"amount\": 10,".getBytes(StandardCharsets.UTF_8)),
        accepted(
            "JSON with a duplicate member, hashed raw",
            "application/json",
            "{\"amount\":1,\"amount\":2}".getBytes(StandardCharsets.UTF_8)),
        accepted(
            "JSON nested 50 000 deep",
            "application/json",
            ("[".repeat(50_000) + "]".repeat(50_000)).getBytes(StandardCharsets.UTF_8)),
        accepted(
            "invalid UTF-8 in a JSON body, hashed raw",
            "application/json",
            new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'}),
        new Case(
            "a key of exactly 255 characters",
            json("/api/payments", "k".repeat(255), 2),
            "{}".getBytes(StandardCharsets.UTF_8),
            false,
            201,
            null,
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void eachBadInputGetsAClearAnswerAndLeavesNothingBehind(Case c) throws Exception {
    int claimsBefore = shop.store.claimedIds();
    int runsBefore = shop.app.totalExecutions();

    RawHttp.Response r = RawHttp.exchange(shop.server.port(), c.head(), c.body(), c.closeOutput());

    if (c.problem() != null) {
      assertProblem(r, c.problem());
      assertThat(r.body()).doesNotContain("sk_bad_input");
    } else if (c.status() > 0) {
      assertThat(r.status()).as(r.body()).isEqualTo(c.status());
    } else {
      assertThat(r.status())
          .as("no answer, or a 4xx: %s", r.body())
          .satisfiesAnyOf(s -> assertThat(s).isEqualTo(-1), s -> assertThat(s).isBetween(400, 499));
    }
    assertThat(shop.app.totalExecutions() - runsBefore).isEqualTo(c.runs() ? 1 : 0);
    if (c.runs()) {
      assertThat(shop.store.live())
          .extracting(IdempotencyRecord::state)
          .doesNotContain(RecordState.IN_PROGRESS);
    } else {
      assertThat(shop.store.claimedIds()).isEqualTo(claimsBefore);
    }
  }

  @Test
  void aBodyThatIsNotJsonIsStillProtectedByItsRawBytes() throws Exception {
    String key = UUID.randomUUID().toString();
    String notJson = "{\"amount\": 10,";

    String first = shop.postJson("/api/payments/raw", key, notJson).body();
    String retry = shop.postJson("/api/payments/raw", key, notJson).body();
    int reuse = shop.postJson("/api/payments/raw", key, notJson + " ").statusCode();

    assertThat(retry).isEqualTo(first);
    assertThat(reuse).isEqualTo(422);
    assertThat(shop.app.executions("/api/payments/raw")).isEqualTo(1);
  }

  @Test
  void afterAllThatTheServerStillAnswers() throws Exception {
    eachBadInputGetsAClearAnswerAndLeavesNothingBehind(cases().findFirst().orElseThrow());

    assertThat(
            shop.postJson("/api/payments/alive", UUID.randomUUID().toString(), "{}").statusCode())
        .isEqualTo(201);
  }

  /**
   * A malformed key is refused before the body is read, so a client that sent {@code Expect:
   * 100-continue} gets its 400 and is never told to send the body (issue 30, item 14).
   */
  @Test
  void aMalformedKeyWithExpectContinueIs400WithoutAskingForTheBody() throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", shop.server.port())) {
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              ("POST /api/payments/expect HTTP/1.1\r\nHost: localhost\r\nApi-Key: sk_bad_input\r\n"
                      + "Idempotency-Key: bad key\r\nContent-Type: application/json\r\n"
                      + "Content-Length: 2\r\nExpect: 100-continue\r\n\r\n")
                  .getBytes(java.nio.charset.StandardCharsets.US_ASCII));

      String first =
          new String(
              socket.getInputStream().readNBytes(12), java.nio.charset.StandardCharsets.US_ASCII);

      assertThat(first).isEqualTo("HTTP/1.1 400");
      assertThat(shop.app.executions("/api/payments/expect")).isZero();
    }
  }
}

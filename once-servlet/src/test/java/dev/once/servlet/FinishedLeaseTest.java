package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static dev.once.servlet.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordState;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §2, "every claim is finished", over real sockets: whatever breaks after the claim (the
 * client, the classifier), the lease ends settled, and an effect that happened never runs twice.
 */
class FinishedLeaseTest extends GuardedAppTest {

  @Test
  void aClientThatHangsUpDuringAStreamedResponseNeverGetsTheHandlerRunAgain() throws Exception {
    String key = key();
    // Far more than the cap and the socket buffers: the handler is still writing when the client
    // leaves.
    String path = "/wait/api/big?bytes=" + (64 << 20);
    byte[] body = "{}".getBytes(StandardCharsets.US_ASCII);

    int read =
        RawHttp.readSomeThenHangUp(
            shop.server.port(),
            List.of(
                "POST " + path + " HTTP/1.1",
                "Host: 127.0.0.1",
                "Api-Key: " + GuardedApp.MERCHANT,
                "Idempotency-Key: " + key,
                "Content-Type: application/json",
                "Content-Length: " + body.length),
            body,
            4096);

    assertThat(read).isEqualTo(4096);
    // The route waits for the first request to finish, so the retry sees how it was settled.
    assertRetryIsUnavailableAndTheHandlerRanOnce(path, key);
  }

  /**
   * A response over the cap streams, and is recorded before its first byte goes out: a client that
   * got the whole body and retries while the handler still runs learns that the response is gone,
   * not that the request is in flight.
   */
  @Test
  void aStreamedResponseIsRecordedBeforeItsFirstByteSoARetryWhileTheHandlerRunsIsUnavailable()
      throws Exception {
    String key = key();
    String path = "/small/api/big-then-hold?bytes=10000&ms=3000";

    HttpResponse<String> first = shop.postJson(path, key, "{}");
    // On a connection of its own, answered while the handler still runs: on the first one, the
    // server would read no request before the handler returned.
    HttpResponse<String> retry =
        HttpClient.newHttpClient()
            .send(shop.post(path, key, "{}").build(), HttpResponse.BodyHandlers.ofString());

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(10_000);
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(shop.app.executions("/small/api/big-then-hold")).isEqualTo(1);
  }

  @Test
  void aClassifierThatThrowsStillSendsTheResponseAndSettlesTheLeaseAsDone() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/broken/api/payments", key, "{}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).startsWith("{\"id\":\"pay_");
    assertRetryIsUnavailableAndTheHandlerRanOnce("/broken/api/payments", key);
  }

  @Test
  void aClassifierThatThrowsOnAStreamedResponseStillSettlesTheLeaseAsDone() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/broken/api/stream", key, "{}");

    assertThat(first.body()).isEqualTo("first;second");
    assertRetryIsUnavailableAndTheHandlerRanOnce("/broken/api/stream", key);
  }

  @Test
  void aStatusOutsideHttpsRangeStillSettlesTheLeaseAsDone() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/status/600", key, "{}");

    assertThat(first.statusCode())
        .as("the container's answer to a response it cannot record")
        .isEqualTo(500);
    assertRetryIsUnavailableAndTheHandlerRanOnce("/api/status/600", key);
  }

  /**
   * The first request with the key on {@code path} is over: it counts as done, and was the only
   * run.
   */
  private void assertRetryIsUnavailableAndTheHandlerRanOnce(String path, String key)
      throws Exception {
    assertProblem(shop.postJson(path, key, "{}"), ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(shop.app.executions(path.replaceFirst("\\?.*", ""))).isEqualTo(1);
    assertThat(
            shop.store.live().stream()
                .filter(r -> r.id().key().value().equals(key))
                .map(IdempotencyRecord::state))
        .containsExactly(RecordState.COMPLETED);
  }
}

package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static dev.once.servlet.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A handler that goes asynchronous is finished when its response completes, not when doFilter
 * returns.
 */
class AsyncServletTest extends GuardedAppTest {

  @Test
  void aResponseCompletedOnAnotherThreadIsRecordedAndReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/async/complete", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/async/complete", key, "{}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Content-Length"))
        .contains(Integer.toString(first.body().length()));
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(shop.app.executions("/api/async/complete")).isEqualTo(1);
  }

  @Test
  void whileTheAsyncWorkRunsTheKeyIsStillInFlight() throws Exception {
    String key = key();
    CompletableFuture<HttpResponse<String>> first =
        shop.client.sendAsync(
            shop.post("/api/async/complete/inflight?ms=1500", key, "{}").build(),
            HttpResponse.BodyHandlers.ofString());
    shop.awaitExecutions(
        "/api/async/complete/inflight", 1); // the async thread then sleeps 1.5 s before writing

    HttpResponse<String> dup = shop.postJson("/api/async/complete/inflight?ms=1500", key, "{}");

    assertProblem(dup, ProblemType.IN_FLIGHT);
    assertThat(first.get().statusCode()).isEqualTo(201);
  }

  @Test
  void aResponseWrittenAfterADispatchIsRecordedAndReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/async/dispatch", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/async/dispatch", key, "{}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).startsWith("{\"id\":\"pay_");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(shop.app.executions("/api/async/dispatch")).isEqualTo(1);
  }

  @Test
  void aResponseWrittenThroughTheAsyncContextIsCapturedToo() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/async/context-response", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/async/context-response", key, "{}");

    assertThat(first.statusCode()).isEqualTo(202);
    assertThat(first.body()).isEqualTo("accepted");
    assertThat(retry.body()).isEqualTo("accepted");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void anAsyncServerErrorReleasesTheKey() throws Exception {
    String key = key();

    shop.postJson("/api/async/server-error", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/async/server-error", key, "{}");

    assertThat(retry.statusCode()).isEqualTo(503);
    assertThat(shop.app.executions("/api/async/server-error")).isEqualTo(2);
  }

  @Test
  void anAsyncTimeoutKeepsTheKeyInFlightBecauseTheWorkMayStillRunAndTheContainerAnswers()
      throws Exception {
    assertThat(shop.firstAnswerWhileTheKeyStaysInFlight("/api/async/timeout").statusCode())
        .isEqualTo(500);
  }

  @Test
  void aHandlerThatThrowsAfterGoingAsynchronousKeepsTheKeyInFlightBecauseItsWorkMayStillRun()
      throws Exception {
    assertThat(shop.firstAnswerWhileTheKeyStaysInFlight("/api/async/throw").statusCode())
        .isEqualTo(500);
  }

  @Test
  void withoutTheAsyncMappingADispatchedResponseCountsAsDoneAndIsNeverRunAgain() throws Exception {
    try (GuardedApp misconfigured = GuardedApp.mappedForRequestsOnly()) {
      String key = key();

      HttpResponse<String> first = misconfigured.postJson("/api/async/dispatch", key, "{}");
      HttpResponse<String> retry = misconfigured.postJson("/api/async/dispatch", key, "{}");

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(first.body()).as("the body stayed in the filter's buffer").isEmpty();
      assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
      assertThat(misconfigured.app.executions("/api/async/dispatch")).isEqualTo(1);
    }
  }
}

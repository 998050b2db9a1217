package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static dev.once.servlet.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * How the filter captures what a servlet writes, and sends it to the first client and to every
 * retry.
 */
class ResponseCaptureTest extends GuardedAppTest {

  @Test
  void aResponseOverTheCapReachesTheFirstClientAndItsRetryIs409ResponseUnavailable()
      throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/small/api/big?bytes=10000", key, "{}");
    HttpResponse<String> retry = shop.postJson("/small/api/big?bytes=10000", key, "{}");

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).hasSize(10000).matches("x+");
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(shop.app.executions("/small/api/big")).isEqualTo(1);
  }

  @Test
  void aResponseJustUnderTheCapIsReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/small/api/big?bytes=3000", key, "{}");
    HttpResponse<String> retry = shop.postJson("/small/api/big?bytes=3000", key, "{}");

    assertThat(retry.body()).isEqualTo(first.body()).hasSize(3000);
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void aHandlerThatWritesAfterAFlushStreamsAndItsRetryIs409ResponseUnavailable() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/stream", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/stream", key, "{}");

    assertThat(first.body()).isEqualTo("first;second");
    assertProblem(retry, ProblemType.RESPONSE_UNAVAILABLE);
    assertThat(shop.app.executions("/api/stream")).isEqualTo(1);
  }

  @Test
  void aFlushAfterTheWholeBodyAsFrameworksDoIsStillRecorded() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/flush-at-end", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/flush-at-end", key, "{}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue("Content-Length")).contains("11");
    assertThat(retry.body()).isEqualTo("{\"ok\":true}");
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void textWrittenThroughTheWriterKeepsItsCharsetOnReplay() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/writer", key, "{\"a\":1}");
    HttpResponse<String> retry = shop.postJson("/api/writer", key, "{\"a\":1}");

    assertThat(first.body()).isEqualTo("Grüße, € 7");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Content-Type"))
        .isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(first.headers().firstValue("Content-Type").orElseThrow().toLowerCase())
        .contains("utf-8");
  }

  @Test
  void sendErrorWithAFinalStatusIsAProblemAndItsReplayIsTheSameBytes() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/error/404", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/error/404", key, "{}");

    assertThat(first.statusCode()).isEqualTo(404);
    assertThat(first.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
    assertThat(first.body())
        .isEqualTo(
            "{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,\"detail\":\"because 404\"}");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Content-Type"))
        .isEqualTo(first.headers().firstValue("Content-Type"));
    assertThat(shop.app.executions("/api/error/404")).isEqualTo(1);
  }

  @Test
  void sendErrorWithATransientStatusIsTheContainersPageAndReleasesTheKey() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/error/503", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/error/503", key, "{}");

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(retry.statusCode()).isEqualTo(503);
    assertThat(first.body()).contains("because 503");
    assertThat(shop.app.executions("/api/error/503")).isEqualTo(2);
  }

  @Test
  void aRedirectIsRecordedWithAnAbsoluteLocation() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/redirect", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/redirect", key, "{}");

    assertThat(first.statusCode()).isEqualTo(302);
    assertThat(first.headers().firstValue("Location"))
        .contains(shop.uri("/api/payments/42").toString());
    assertThat(retry.statusCode()).isEqualTo(302);
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"));
    assertThat(shop.app.executions("/api/redirect")).isEqualTo(1);
  }

  @Test
  void noContentIsReplayedWithoutABodyOrALength() throws Exception {
    String key = key();

    HttpResponse<String> first = shop.postJson("/api/nocontent", key, "{}");
    HttpResponse<String> retry = shop.postJson("/api/nocontent", key, "{}");

    assertThat(first.statusCode()).isEqualTo(204);
    assertThat(retry.statusCode()).isEqualTo(204);
    assertThat(retry.headers().firstValue("Content-Length")).isEmpty();
    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
  }

  @Test
  void headersAnOuterFilterSetAreEachRequestsOwnWhileTheHandlersAreReplayed() throws Exception {
    String key = key();

    HttpResponse<String> first =
        shop.postJson("/api/payments/outer", key, "{}", "Origin", "https://a.example");
    HttpResponse<String> retry =
        shop.postJson("/api/payments/outer", key, "{}", "Origin", "https://b.example");

    assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
    assertThat(first.headers().allValues(FakeOuterFilter.ALLOW_ORIGIN))
        .containsExactly("https://a.example");
    assertThat(retry.headers().allValues(FakeOuterFilter.ALLOW_ORIGIN))
        .containsExactly("https://b.example");
    assertThat(first.headers().allValues(FakeOuterFilter.REQUEST_ID)).hasSize(1);
    assertThat(retry.headers().allValues(FakeOuterFilter.REQUEST_ID))
        .hasSize(1)
        .doesNotContainAnyElementsOf(first.headers().allValues(FakeOuterFilter.REQUEST_ID));
    assertThat(first.headers().allValues("Vary")).containsExactly("Origin", "Accept");
    assertThat(retry.headers().allValues("Vary"))
        .as("the retry's own value, then the handler's")
        .containsExactly("Origin", "Accept");
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"));
    assertThat(retry.headers().allValues("X-Multi")).containsExactly("one", "two");
    assertThat(shop.app.executions("/api/payments/outer")).isEqualTo(1);
  }
}

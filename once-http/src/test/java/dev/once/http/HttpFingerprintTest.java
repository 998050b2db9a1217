package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.store.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What makes two HTTP requests "the same request": the fingerprint as once-http computes it. */
class HttpFingerprintTest {

  private final Once once = Once.of(InMemoryStore.create());
  private final HttpIdempotency http = HttpIdempotency.builder(once).build();
  private final String key = "\"" + UUID.randomUUID() + "\"";

  @AfterEach
  void close() {
    once.close();
  }

  @Test
  void jsonPatchAndMergePatchWithTheSameBytesAreDifferentRequests() {
    String body = "{\"op\":\"remove\",\"path\":\"/a\"}";
    complete(patch("application/json-patch+json", body));

    assertThat(problemOf(begin(patch("application/merge-patch+json", body))))
        .isEqualTo(ProblemType.KEY_REUSED);
  }

  @Test
  void aCharsetParameterOnARawBodyDoesNotMakeARetryADifferentRequest() {
    complete(patch("text/plain", "hello"));

    assertThat(begin(patch("Text/Plain; charset=UTF-8", "hello")))
        .isInstanceOf(Decision.Respond.class)
        .extracting(d -> ((Decision.Respond) d).replayed())
        .isEqualTo(true);
  }

  @Test
  void aCharsetParameterOnAJsonBodyDoesNotMakeARetryADifferentRequest() {
    complete(patch("application/json", "{\"a\":1}"));

    assertThat(begin(patch("application/json; charset=utf-8", "{ \"a\": 1.0 }")))
        .isInstanceOf(Decision.Respond.class)
        .extracting(d -> ((Decision.Respond) d).replayed())
        .isEqualTo(true);
  }

  @Test
  void anAbsentContentTypeDiffersFromAnyGivenOne() {
    complete(patch(null, "hello"));

    assertThat(problemOf(begin(patch("application/octet-stream", "hello"))))
        .isEqualTo(ProblemType.KEY_REUSED);
  }

  @Test
  void twoSixtyFourBitIdsAboveTwoToThe53AreDifferentRequests() {
    complete(patch("application/json", "{\"account\":12345678901234567891}"));

    assertThat(problemOf(begin(patch("application/json", "{\"account\":12345678901234567892}"))))
        .isEqualTo(ProblemType.KEY_REUSED);
  }

  private IncomingRequest patch(String contentType, String body) {
    Headers.Builder headers =
        Headers.builder().add("Api-Key", "sk_merchant_1").add("Idempotency-Key", key);
    if (contentType != null) {
      headers.add("Content-Type", contentType);
    }
    return IncomingRequest.of(
        "PATCH", "/accounts/1", headers.build(), body.getBytes(StandardCharsets.UTF_8));
  }

  private Decision begin(IncomingRequest request) {
    return http.begin(http.route(request.path()), request);
  }

  private void complete(IncomingRequest request) {
    Decision first = begin(request);
    assertThat(first).isInstanceOf(Decision.Proceed.class);
    ((Decision.Proceed) first)
        .exchange()
        .record(new StoredResponse(200, Headers.of(), new byte[0]));
  }

  private static ProblemType problemOf(Decision decision) {
    assertThat(decision).isInstanceOf(Decision.Respond.class);
    String body =
        new String(((Decision.Respond) decision).response().body(), StandardCharsets.UTF_8);
    for (ProblemType type : ProblemType.values()) {
      if (body.contains("\"type\":\"" + type.uri() + "\"")) {
        return type;
      }
    }
    throw new AssertionError("not a problem response: " + body);
  }
}

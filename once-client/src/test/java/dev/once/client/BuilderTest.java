package dev.once.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Bad options are refused when set, naming the option; contradictions when built. */
class BuilderTest {

  private static void rejects(String option, Consumer<OnceHttpClient.Builder> setter) {
    assertThatThrownBy(() -> setter.accept(OnceHttpClient.builder()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(option);
  }

  @Test
  void badValuesAreRefusedWithTheOptionsName() {
    rejects("maxAttempts", b -> b.maxAttempts(0));
    rejects("maxAttempts", b -> b.maxAttempts(101));
    rejects("deadline", b -> b.deadline(Duration.ZERO));
    rejects("deadline", b -> b.deadline(null));
    rejects("deadline", b -> b.deadline(Duration.ofDays(2)));
    rejects("initialBackoff", b -> b.initialBackoff(Duration.ofMillis(-1)));
    rejects("maxBackoff", b -> b.maxBackoff(null));
    rejects("coveredMethods", b -> b.coveredMethods("PO ST"));
    rejects("coveredMethods", b -> b.coveredMethods((String) null));
    rejects("coveredMethods", b -> b.coveredMethods((String[]) null));
    rejects("random", b -> b.random(null));
    rejects("clock", b -> b.clock(null));
    assertThatThrownBy(() -> OnceHttpClient.builder(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("httpClient");
  }

  @Test
  void aBackoffThatStartsAboveItsMaximumIsAContradiction() {
    assertThatThrownBy(
            () ->
                OnceHttpClient.builder()
                    .initialBackoff(Duration.ofSeconds(5))
                    .maxBackoff(Duration.ofSeconds(1))
                    .build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("initialBackoff");
  }

  @Test
  void aBadKeyIsRefusedBeforeAnythingIsSent() {
    OnceHttpClient client = OnceHttpClient.of(HttpClient.newHttpClient());
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/x"))
            .POST(HttpRequest.BodyPublishers.noBody())
            .build();

    for (String key : new String[] {"", "has space", "x".repeat(256), "caf\u00e9"}) {
      assertThatThrownBy(() -> client.sendAsync(request, BodyHandlers.discarding(), key))
          .as(key)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("idempotency key");
    }
    HttpRequest keyed =
        HttpRequest.newBuilder(request, (n, v) -> true).header("Idempotency-Key", "a").build();
    assertThatThrownBy(() -> client.sendAsync(keyed, BodyHandlers.discarding(), "b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("idempotencyKey");
  }

  @Test
  void theBuiltClientKeepsTheGivenHttpClient() {
    HttpClient http = HttpClient.newHttpClient();
    assertThat(OnceHttpClient.builder(http).build().httpClient()).isSameAs(http);
    assertThat(OnceHttpClient.builder().build().httpClient()).isNotNull();
  }

  @Test
  void aKeyIsSentBareUnlessItStartsWithAQuote() {
    assertThat(Call.headerValue("abc\"d\\")).isEqualTo("abc\"d\\");
    assertThat(Call.headerValue("\"a\\b\"")).isEqualTo("\"\\\"a\\\\b\\\"\"");
  }
}

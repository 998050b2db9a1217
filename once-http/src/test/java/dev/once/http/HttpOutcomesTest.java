package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The default verdict on each status (DESIGN §4): what is replayed, and what a retry may run again.
 */
class HttpOutcomesTest {

  @ParameterizedTest
  @ValueSource(ints = {200, 201, 202, 204, 301, 302, 303, 304, 307, 308})
  void successesAndRedirectsAreCompleted(int status) {
    assertThat(HttpOutcomes.of(status)).isEqualTo(Outcome.COMPLETED);
  }

  @ParameterizedTest
  @ValueSource(ints = {400, 401, 402, 403, 404, 405, 409, 410, 412, 413, 415, 422})
  void otherClientErrorsAreFinal(int status) {
    assertThat(HttpOutcomes.of(status)).isEqualTo(Outcome.FAILED_FINAL);
  }

  @ParameterizedTest
  @ValueSource(ints = {408, 423, 425, 429, 500, 502, 503, 504, 599})
  void serverErrorsAndRetryableClientErrorsAreTransient(int status) {
    assertThat(HttpOutcomes.DEFAULT.classify(new StoredResponse(status, Headers.EMPTY, null)))
        .isEqualTo(Outcome.TRANSIENT);
  }

  @ParameterizedTest
  @CsvSource({
    "100, TRANSIENT, TRANSIENT, TRANSIENT",
    "200, COMPLETED, COMPLETED, COMPLETED",
    "204, COMPLETED, COMPLETED, COMPLETED",
    "302, COMPLETED, COMPLETED, TRANSIENT",
    "404, FAILED_FINAL, FAILED_FINAL, TRANSIENT",
    "409, FAILED_FINAL, FAILED_FINAL, TRANSIENT",
    "429, TRANSIENT, FAILED_FINAL, TRANSIENT",
    "500, TRANSIENT, FAILED_FINAL, TRANSIENT",
    "503, TRANSIENT, FAILED_FINAL, TRANSIENT"
  })
  void eachPresetRecordsWhatItsNameSays(
      int status, Outcome byDefault, Outcome likeStripe, Outcome successOnly) {
    StoredResponse response = new StoredResponse(status, Headers.EMPTY, null);

    assertThat(HttpOutcomes.DEFAULT.classify(response)).isEqualTo(byDefault);
    assertThat(HttpOutcomes.STRIPE.classify(response)).isEqualTo(likeStripe);
    assertThat(HttpOutcomes.SUCCESS_ONLY.classify(response)).isEqualTo(successOnly);
  }

  @Test
  void presetsAreNamedAsTheReplayOptionSpellsThem() {
    assertThat(HttpOutcomes.values())
        .extracting(HttpOutcomes::optionName)
        .containsExactly("default", "stripe", "success-only");
    assertThat(RouteOptions.named("replay").choices())
        .containsExactly("default", "stripe", "success-only");
  }
}

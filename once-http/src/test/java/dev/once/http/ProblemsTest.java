package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProblemsTest {

  private static String body(StoredResponse r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }

  @Test
  void bodyTooLargeIs413NamingTheLimit() {
    StoredResponse r = Problems.bodyTooLarge(1024);

    assertThat(r.status()).isEqualTo(413);
    assertThat(body(r)).contains(ProblemType.BODY_TOO_LARGE.uri()).contains("1024 bytes");
  }

  @Test
  void forStatusIsAnAboutBlankProblemTitledWithTheReasonPhrase() {
    StoredResponse r = Problems.forStatus(404, null);

    assertThat(r.headers().first("Content-Type")).contains(Problems.MEDIA_TYPE);
    assertThat(body(r))
        .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404}");
  }

  @Test
  void forStatusCarriesTheHandlersMessageEscaped() {
    assertThat(body(Problems.forStatus(422, "amount \"x\" is\nnot a number")))
        .isEqualTo(
            "{\"type\":\"about:blank\",\"title\":\"Unprocessable Content\",\"status\":422,"
                + "\"detail\":\"amount \\\"x\\\" is\\nnot a number\"}");
  }

  @Test
  void forStatusRefusesStatusesThatAreNotErrors() {
    assertThatThrownBy(() -> Problems.forStatus(200, null))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void unknownStatusesGetAGenericTitle() {
    assertThat(body(Problems.forStatus(499, null))).contains("\"title\":\"Client Error\"");
    assertThat(body(Problems.forStatus(599, null))).contains("\"title\":\"Server Error\"");
  }
}

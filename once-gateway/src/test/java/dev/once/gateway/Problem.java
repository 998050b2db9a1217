package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.http.HttpResponse;

/** Assertions on RFC 9457 problem responses. */
final class Problem {

  private Problem() {}

  static void assertProblem(HttpResponse<String> response, ProblemType type) {
    assertProblem(response, type.status(), type.slug());
  }

  static void assertProblem(HttpResponse<String> response, int status, String slug) {
    assertThat(response.statusCode()).as("status of %s", response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type")).contains("application/problem+json");
    assertThat(response.body()).contains("\"type\":\"" + ProblemType.BASE_URI + slug + "\"");
  }
}

package dev.once.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.http.Problems;
import java.net.http.HttpResponse;

/** Assertions on RFC 9457 answers. */
final class Problem {

  private Problem() {}

  static void assertProblem(HttpResponse<String> r, ProblemType type) {
    assertThat(r.statusCode()).as("status of %s", r.body()).isEqualTo(type.status());
    assertThat(r.headers().firstValue("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith(Problems.MEDIA_TYPE));
    assertThat(r.body()).contains("\"type\":\"" + type.uri() + "\"");
    assertThat(r.headers().firstValue("Content-Length"))
        .contains(Integer.toString(r.body().length()));
  }

  static void assertProblem(RawHttp.Response r, ProblemType type) {
    assertThat(r.status()).as("status of %s", r.body()).isEqualTo(type.status());
    assertThat(r.header("Content-Type"))
        .hasValueSatisfying(ct -> assertThat(ct).startsWith(Problems.MEDIA_TYPE));
    assertThat(r.body()).contains("\"type\":\"" + type.uri() + "\"");
  }
}

package dev.once.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ProblemJsonTest {

  private static String type(String json) {
    return ProblemJson.type(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theUrisAreTheServersOwn() {
    assertThat(ProblemJson.IN_FLIGHT).isEqualTo(ProblemType.IN_FLIGHT.uri());
    assertThat(ProblemJson.KEY_REUSED).isEqualTo(ProblemType.KEY_REUSED.uri());
    assertThat(ProblemJson.RESPONSE_UNAVAILABLE).isEqualTo(ProblemType.RESPONSE_UNAVAILABLE.uri());
  }

  @Test
  void findsTheTopLevelTypeWhereverItIs() {
    assertThat(type("{\"type\":\"a\"}")).isEqualTo("a");
    assertThat(type(" {\n \"title\" : \"x\" , \"status\": 409, \"type\" : \"b\" }")).isEqualTo("b");
    assertThat(
            type(
                "{\"ext\":{\"type\":\"nested\",\"list\":[1,{\"type\":\"x\"},\"]\"]},\"type\":\"c\"}"))
        .isEqualTo("c");
    assertThat(type("{\"t\\\"ype\":\"no\",\"type\":\"https:\\/\\/once.dev\\u002Fp\"}"))
        .isEqualTo("https://once.dev/p");
  }

  @Test
  void anythingElseHasNoType() {
    for (String json :
        new String[] {
          "",
          "[]",
          "{}",
          "{\"type\":1}",
          "{\"ext\":{\"type\":\"nested\"}}",
          "{\"type\":\"unterminated",
          "{\"title\":\"x\"",
          "not json",
          "{\"a\":]}"
        }) {
      assertThat(type(json)).as(json).isEmpty();
    }
  }
}

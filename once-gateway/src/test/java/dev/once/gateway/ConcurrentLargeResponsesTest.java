package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Twenty keyed requests at once whose upstream answers 2 MiB each, default options (issue 30, item
 * 5): each client gets its whole body or a clear 5xx problem, none waits for nothing, and each key
 * ends done: its retry never runs the upstream again.
 */
@Timeout(120)
class ConcurrentLargeResponsesTest {

  private static final int TWO_MIB = 2 << 20;

  @Test
  void twentyConcurrentTwoMebibyteAnswersEachArriveWholeOrAsAProblem() throws Exception {
    try (TestGateway gw = TestGateway.start("--upstream-timeout", "30s")) {
      for (int burst = 0; burst < 3; burst++) {
        List<String> keys = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
          String key = key();
          keys.add(key);
          answers.add(gw.client.sendAsync(gw.client.post(path(burst, i), key, "{}")));
        }
        for (int i = 0; i < 20; i++) {
          HttpResponse<String> answer = answers.get(i).get(60, TimeUnit.SECONDS);
          if (answer.statusCode() == 200) {
            assertThat(answer.body()).as("burst %d, request %d", burst, i).hasSize(TWO_MIB);
          } else {
            assertThat(answer.statusCode())
                .as("burst %d, request %d", burst, i)
                .isBetween(500, 599);
            assertThat(answer.headers().firstValue("Content-Type"))
                .contains("application/problem+json");
          }
        }
        for (int i = 0; i < 20; i++) {
          gw.client.postJson(path(burst, i), keys.get(i), "{}");
          assertThat(gw.upstream.runs(path(burst, i)))
              .as("runs of burst %d, request %d", burst, i)
              .isEqualTo(1);
        }
      }
    }
  }

  private static String path(int burst, int i) {
    return "/b" + burst + "r" + i + "/big/" + TWO_MIB;
  }
}

package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.tck.Eventually;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway process killed with SIGKILL in the middle of a request, then started again on the
 * same data directory: what the embedded store confirmed survives, and duplicates still run once.
 */
@Timeout(180)
class CrashRecoveryTest {

  @TempDir Path dir;

  @Test
  void afterSigkillCompletedRecordsReplayTheInFlightKeyStaysGuardedAndAHerdRunsOnce()
      throws Exception {
    try (FakeUpstream upstream = new FakeUpstream()) {
      Path yaml = dir.resolve("gateway.yaml");
      Files.writeString(
          yaml, TestGateway.ROUTES.replace("upstream-timeout: 1500ms", "upstream-timeout: 20s"));
      List<String> args = TestGateway.args(upstream.url(), dir, "--config", yaml.toString());
      String completedKey = key();
      String inFlightKey = key();
      HttpResponse<String> completed;

      ChildGateway first = ChildGateway.start(args);
      try {
        Client client = new Client(first.uri());
        completed = client.postJson("/payments/completed", completedKey, "{\"amount\":1}");
        assertThat(completed.statusCode()).isEqualTo(201);
        CompletableFuture<HttpResponse<String>> cut =
            client.sendAsync(client.post("/slow/3000", inFlightKey, "{}"));
        Eventually.assertThat(
            "the request reached the upstream",
            java.time.Duration.ofSeconds(10),
            () -> upstream.runs("/slow/3000") == 1);

        first.kill();

        assertThat(cut).failsWithin(java.time.Duration.ofSeconds(10));
      } finally {
        first.close();
      }

      try (ChildGateway second = ChildGateway.start(args)) {
        Client client = new Client(second.uri());

        HttpResponse<String> replay =
            client.postJson("/payments/completed", completedKey, "{\"amount\":1}");
        assertThat(replay.body()).isEqualTo(completed.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(upstream.runs("/payments/completed")).isEqualTo(1);

        // The killed request may have had its effect upstream: its key stays in flight until its
        // lease ends.
        assertProblem(client.postJson("/slow/3000", inFlightKey, "{}"), ProblemType.IN_FLIGHT);

        String herdKey = key();
        List<CompletableFuture<HttpResponse<String>>> herd = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
          herd.add(client.sendAsync(client.post("/wait/slow/300", herdKey, "{}")));
        }
        for (CompletableFuture<HttpResponse<String>> r : herd) {
          assertThat(r.get().statusCode()).isEqualTo(201);
        }
        assertThat(upstream.runs("/wait/slow/300")).isEqualTo(1);
        assertThat(upstream.runs("/slow/3000")).isEqualTo(1);
      }
    }
  }
}

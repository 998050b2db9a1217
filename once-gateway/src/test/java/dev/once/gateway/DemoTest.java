package dev.once.gateway;

import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code --demo}: the curl lines it prints do what they say, and the ledger shows one charge per
 * key.
 */
@Timeout(60)
class DemoTest {

  @Test
  void theDemoStopsDuplicateChargesOfItsNonIdempotentUpstream() throws Exception {
    Cli.Parsed parsed = Cli.parse(new String[] {"--demo", "--port", "0", "--access-log", "false"});
    try (Demo demo = Demo.start(parsed, Cli.configure(parsed, Map.of()), Map.of())) {
      Client client = new Client(demo.gateway().uri());
      String charge = "{\"amount\":1000,\"currency\":\"EUR\"}";

      HttpResponse<String> first =
          client.postJson("/charges", "demo-1", charge, "Api-Key", "merchant-42");
      HttpResponse<String> retry =
          client.postJson("/charges", "demo-1", charge, "Api-Key", "merchant-42");
      HttpResponse<String> reused =
          client.postJson("/charges", "demo-1", "{\"amount\":9999}", "Api-Key", "merchant-42");
      HttpResponse<String> noKey =
          client.postJson("/charges", null, charge, "Api-Key", "merchant-42");
      HttpResponse<String> ledger = client.get("/ledger");

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertProblem(reused, ProblemType.KEY_REUSED);
      assertProblem(noKey, ProblemType.KEY_MISSING);
      assertThat(ledger.body()).startsWith("{\"charges\":1,");
      assertThat(demo.upstream().chargesCreated()).isEqualTo(1);
      assertThat(demo.instructions())
          .contains(demo.gateway().uri() + "/charges")
          .contains("Idempotency-Key: demo-1")
          .contains("delay=5000")
          .contains("/ledger");
    }
  }
}

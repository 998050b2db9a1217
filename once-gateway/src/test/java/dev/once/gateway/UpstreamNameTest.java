package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * An upstream named by a host name rather than an address: the name is looked up when a connection
 * opens (off the event loops on the Netty core), and a name that does not resolve fails the request
 * as never sent, so its key is released.
 */
class UpstreamNameTest {

  @Test
  void anUpstreamNamedByAHostNameIsLookedUpAndReached() throws Exception {
    try (FakeUpstream named = new FakeUpstream();
        TestGateway gw =
            TestGateway.start(
                "--upstream", "http://localhost:" + URI.create(named.url()).getPort())) {
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/payments/named", key, "{}");
      HttpResponse<String> again = gw.client.postJson("/payments/named", key, "{}");

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(named.runs("/payments/named")).isEqualTo(1);
    }
  }

  @Test
  void aNameThatDoesNotResolveReleasesTheKey() throws Exception {
    // .invalid never resolves (RFC 6761).
    try (TestGateway gw = TestGateway.start("--upstream", "http://once-upstream.invalid:8080")) {
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/payments/nowhere", key, "{}");
      HttpResponse<String> retry = gw.client.postJson("/payments/nowhere", key, "{}");

      assertProblem(first, 502, "upstream-unreachable");
      assertProblem(retry, 502, "upstream-unreachable");
    }
  }
}
